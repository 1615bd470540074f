// PassiveFeed: cuts each disk's production I/O into windows for the passive
// judge (probes/verdicts/passive/passive_window.h). Each sample costs a
// comparison of window indices; a sample that crosses a multiple of the
// window on the wall clock closes the open window, whose figures are the
// growth of the disk's cumulative counters from the window's first sample
// to this one, and opens the next at it. Windows are contiguous, and a lost
// or late sample only makes one longer.
//
// Per disk and op (read, write): from the BPF collector's device stage when
// it has the disk at both ends (source "device"), one window per request
// size class (size "small", "medium", "large": a disk's latency moves with
// its mix of sizes, each class's much less), else from diskstats (source
// "diskstats", size "all", queueing included); with `shadow_diskstats` both.
// Thread-safety: one owner (the sampling thread).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collectors/disk/diskstats.h"
#include "collectors/vm/proc_stat.h"
#include "daemon/sampling/snapshot.h"
#include "probes/verdicts/passive/passive_window.h"

namespace iowatch::daemon {

struct PassiveFeedOptions {
  int64_t window_ms = 60'000;
  bool shadow_diskstats = false;  // diskstats windows too where the device stage is known
};

class PassiveFeed {
 public:
  explicit PassiveFeed(PassiveFeedOptions options = {}) : options_(options) {}

  // One sample. `probing`: the disks (kernel names) a probe of iowatch's
  // ran on during the sample's interval. Returns the windows the sample
  // closed, by device then op then source.
  std::vector<probes::PassiveWindow> Add(const Snapshot& snapshot,
                                         std::span<const std::string> probing);

 private:
  struct DiskMark {
    collectors::DiskCounters counters;
    // The device stage by size class per op, read and write.
    std::optional<collectors::bpf::SizeClasses> classes[2];
    bool probe = false;
    bool counters_reset = false;
  };
  struct Mark {
    int64_t index = 0;
    int64_t wall_ms = 0;
    double monotonic_seconds = 0;
    std::optional<collectors::CpuTicks> cpu;
    std::map<std::string, DiskMark, std::less<>> disks;
  };

  Mark MarkOf(const Snapshot& snapshot, int64_t index) const;
  void Close(const Mark& from, const Mark& to, std::vector<probes::PassiveWindow>& out) const;
  // What a disk's windows share: its name, span, steal, flags, queue depth
  // and utilisation.
  static probes::PassiveWindow DiskWindow(const std::string& name, const DiskMark& before,
                                          const DiskMark& after, const Mark& from, const Mark& to);
  // One op's windows: the device stage's by size class where known,
  // diskstats' otherwise (or too, with shadow_diskstats).
  void OpWindows(probes::PassiveWindow w, const DiskMark& before, const DiskMark& after, size_t op,
                 double seconds, std::vector<probes::PassiveWindow>& out) const;
  // Appends the device stage's windows, one per size class; false (none
  // appended) when it is not known at both ends or went backwards.
  static bool DeviceClassWindows(const probes::PassiveWindow& w, const DiskMark& before,
                                 const DiskMark& after, size_t op, double seconds,
                                 std::vector<probes::PassiveWindow>& out);

  PassiveFeedOptions options_;
  std::optional<Mark> open_;
};

}  // namespace iowatch::daemon
