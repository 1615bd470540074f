// DeviceBusyTracker: how busy each watched block device has been lately, as
// iostat's %util measures it: the growth of diskstats' io_ticks (milliseconds
// with I/O in flight, Documentation/admin-guide/iostats.rst field 10) over
// wall time. The daemon feeds it every diskstats line once per sample; it
// keeps, for the devices the probe scheduler asked to Watch only, the
// per-sample busy fractions of the last `keep` seconds, so its memory is
// bounded by (watched devices) x (keep / sampling interval).
//
// Utilization() can leave out sample intervals that overlap given time
// intervals: the scheduler passes its own probe runs on the device, so a
// probe's I/O never reads as production load when the next probe asks
// whether the device is busy (DESIGN.md §6, "Our own I/O").
//
// io_ticks is printed with %u and wraps at 2^32 ms (~49.7 days): deltas are
// taken modulo 2^32 while both values fit in 32 bits. A delta larger than the
// interval could hold (a device removed and re-added with fresh counters)
// makes that interval unusable rather than 100 % busy.
// Thread-safety: every member takes an internal mutex; Record (sampler) and
// Utilization (scheduler) may be called from different threads.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>

namespace iowatch::daemon {

// A block device as the kernel numbers it: makedev(major, minor), the st_dev
// of a file on it, or the st_rdev of its node.
using DeviceId = dev_t;
DeviceId MakeDeviceId(uint32_t major, uint32_t minor);
std::string FormatDevice(DeviceId device);  // "8:0", the form of /sys/dev/block and the store

// A closed span of monotonic time, in seconds.
struct TimeSpan {
  double start_s = 0;
  double end_s = 0;
};

// What the probe scheduler asks about a device before it starts a probe.
class BusySource {
 public:
  virtual ~BusySource() = default;
  // Starts keeping samples of `device` (idempotent).
  virtual void Watch(DeviceId device) = 0;
  // The fraction (0..1) of the last `window_s` seconds before `now_s` that
  // the device had I/O in flight, over the sample intervals that overlap no
  // span of `exclude`; nullopt when those cover less than half the window
  // (too soon after start, a device not in diskstats, or mostly excluded).
  virtual std::optional<double> Utilization(DeviceId device, double window_s, double now_s,
                                            std::span<const TimeSpan> exclude) const = 0;
};

class DeviceBusyTracker final : public BusySource {
 public:
  // Keeps `keep_s` seconds of samples per device (probes.busy_window).
  explicit DeviceBusyTracker(double keep_s) : keep_s_(keep_s) {}

  void Watch(DeviceId device) override;

  // One sample: at monotonic `now_s`, `device` had `io_ticks_ms`. Ignored for
  // devices not watched and when `now_s` repeats the previous sample's time;
  // a time before it restarts the device's series.
  void Record(double now_s, DeviceId device, uint64_t io_ticks_ms);

  std::optional<double> Utilization(DeviceId device, double window_s, double now_s,
                                    std::span<const TimeSpan> exclude) const override;

  // Sample intervals kept for `device` (0 when not watched); for tests of
  // the memory bound.
  size_t IntervalCount(DeviceId device) const;

 private:
  struct Interval {
    double start_s;
    double end_s;
    double busy_s;  // time with I/O in flight, at most end_s - start_s
  };
  struct Series {
    std::optional<double> last_s;
    uint64_t last_ticks_ms = 0;
    std::deque<Interval> intervals;  // oldest first
  };

  const double keep_s_;
  mutable std::mutex mutex_;
  std::map<DeviceId, Series> devices_;
};

}  // namespace iowatch::daemon
