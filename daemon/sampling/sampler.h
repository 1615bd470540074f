// Sampler: reads every source once per interval, derives the iostat and
// vmstat series against the previous sample (with the same functions as the
// CLI), keeps their maxima over the window, applies the device filters, and
// returns an immutable Snapshot. It never throws and never stops: a source
// that fails is reported in the snapshot's collector status and its series
// are left out until it reads again.
//
// Sysfs is walked (~15 attribute files per device) only when the set of
// devices in /proc/diskstats or the filters change, never on every sample. The work that
// depends only on that set (filters, sysfs lookups, sorting by name) is done
// then too and kept as a plan: each sample just walks /proc/diskstats' lines
// into the per-device state slots the plan assigns them.
// Thread-safety: not thread-safe; one caller (the event loop) at a time.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collectors/device_filter.h"
#include "collectors/diskstats.h"
#include "collectors/vmstat.h"
#include "common/file_tree.h"
#include "daemon/sampling/cgroup_source.h"
#include "daemon/sampling/pressure_source.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/window_max.h"

namespace iowatch::daemon {

struct SamplerOptions {
  double interval_seconds = 1;
  double window_seconds = 60;
  collectors::DeviceFilter filter;
  bool partitions = false;  // export partitions too
  CgroupSourceOptions cgroups;
  uint64_t page_bytes = 4096;
  double user_hz = 100;  // sysconf(_SC_CLK_TCK)
  // Monotonic seconds for the collectors' durations; steady_clock when empty.
  // Tests inject a fake so that /metrics is reproducible.
  std::function<double()> monotonic_seconds;
};

class Sampler {
 public:
  explicit Sampler(SamplerOptions options);

  // Takes one sample. `now_seconds` is the wall-clock time to stamp it with.
  std::shared_ptr<const Snapshot> Collect(const FileTree& procfs, const FileTree& sysfs,
                                          double now_seconds);

  // New filters or window on config reload; per-device history is kept.
  void Reconfigure(SamplerOptions options);

 private:
  struct DeviceState {
    std::string name;
    bool has_previous = false;  // false until the device's first sample
    collectors::DiskCounters previous;
    std::vector<WindowMax> windows;
  };
  // What the plan was made for: one per /proc/diskstats line, in file order.
  struct Line {
    std::string name;
    bool extended = false;  // HasExtendedFields(): devices without them are skipped
    bool operator==(const Line&) const = default;
  };
  static constexpr size_t kSkip = static_cast<size_t>(-1);

  void CollectDisks(const FileTree& procfs, const FileTree& sysfs, Snapshot& out);
  // Walks sysfs again when the diskstats lines changed (hotplug), on the
  // first run, after new filters or a failed walk; the sysfs collector's status.
  CollectorStatus DiscoverIfNeeded(const collectors::Diskstats& diskstats, const FileTree& sysfs);
  // Each planned device's counters, rates and window maxima into `out`.
  void DeriveDevices(const collectors::Diskstats& diskstats, uint64_t interval_cs, Snapshot& out);
  bool LinesChanged(const collectors::Diskstats& diskstats) const;
  // Assigns the wanted lines their state slots (sorted by name, keeping the
  // history of devices that stay) and keeps the wanted devices' entries of
  // `discovered` (every block device in sysfs).
  void Plan(const collectors::Diskstats& diskstats,
            const std::vector<collectors::BlockDevice>& discovered);
  void CollectVm(const FileTree& procfs, Snapshot& out);
  // The vmstat rates and window maxima from the previous sample to `sample`.
  void DeriveVmRates(collectors::VmSample sample, Snapshot& out);
  bool Wanted(const collectors::BlockDevice* device, const std::string& name) const;
  // Adds the malformed lines skipped in this sample to the collector's
  // total and names the first in its status.
  void CountSkipped(const std::vector<Error>& skipped, CollectorStatus& status);
  uint64_t WindowSamples() const;
  double Now() const;

  SamplerOptions options_;
  uint64_t tick_ = 0;
  std::optional<uint64_t> previous_uptime_cs_;
  double last_interval_seconds_ = 0;  // measured by /proc/uptime, 0 when unknown
  std::vector<DeviceState> devices_;  // wanted devices, sorted by name
  std::vector<Line> lines_;           // /proc/diskstats as of the plan
  std::vector<size_t> slots_;         // per line: index into devices_, or kSkip
  bool plan_stale_ = true;            // filters changed since the plan
  // The wanted devices' sysfs information, shared by every snapshot until
  // the plan changes. Unwanted devices' is not kept: a filter change walks
  // sysfs again.
  std::shared_ptr<const std::vector<collectors::BlockDevice>> block_devices_;
  bool discovery_ok_ = false;
  std::optional<collectors::VmSample> previous_vm_;
  std::vector<WindowMax> vm_windows_;
  PressureSource pressure_;
  CgroupSource cgroups_;
  std::map<std::string, uint64_t> parse_errors_;  // per collector, since start
};

}  // namespace iowatch::daemon
