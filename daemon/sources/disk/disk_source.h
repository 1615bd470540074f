// DiskSource: /proc/diskstats each sample, sysfs when the devices change,
// into the snapshot's devices (raw counters, the iostat series against the
// previous sample, with the same functions as the CLI, and their window
// maxima) and block devices. Collectors "sysfs" and "diskstats".
//
// Sysfs is walked (~15 attribute files per device) only when the set of
// devices in /proc/diskstats or the filters change, never on every sample.
// The work that depends only on that set (filters, sysfs lookups, sorting by
// name) is done then too and kept as a plan: each sample just walks
// /proc/diskstats' lines into the per-device state slots the plan assigns.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collectors/diskstats.h"
#include "common/file_tree.h"
#include "daemon/sampling/sample_source.h"
#include "daemon/sampling/source_context.h"
#include "daemon/sampling/window_max.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& DiskSourceDescriptor();

// The families it renders (disk_families.cc).
void AddDiskFamilies(TableBuilder& t);

class DiskSource : public SampleSource {
 public:
  // Fills out.devices, out.block_devices and the two collectors' statuses.
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

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

  // Walks sysfs again when the diskstats lines changed (hotplug), on the
  // first run, after new options or a failed walk; the sysfs collector's status.
  CollectorStatus DiscoverIfNeeded(const collectors::Diskstats& diskstats, const FileTree& sysfs,
                                   const SourceContext& context);
  // Each planned device's counters, rates and window maxima into `out`.
  void DeriveDevices(const collectors::Diskstats& diskstats, uint64_t interval_cs,
                     const SourceContext& context, Snapshot& out);
  bool LinesChanged(const collectors::Diskstats& diskstats) const;
  // Assigns the wanted lines their state slots (sorted by name, keeping the
  // history of devices that stay) and keeps the wanted devices' entries of
  // `discovered` (every block device in sysfs).
  void Plan(const collectors::Diskstats& diskstats,
            const std::vector<collectors::BlockDevice>& discovered, const SamplerOptions& options);

  std::optional<uint64_t> previous_uptime_cs_;
  std::vector<DeviceState> devices_;  // wanted devices, sorted by name
  std::vector<Line> lines_;           // /proc/diskstats as of the plan
  std::vector<size_t> slots_;         // per line: index into devices_, or kSkip
  // The options the plan was made for: new ones (a reload) plan again.
  std::shared_ptr<const SamplerOptions> planned_for_;
  // The wanted devices' sysfs information, shared by every snapshot until
  // the plan changes. Unwanted devices' is not kept: a filter change walks
  // sysfs again.
  std::shared_ptr<const std::vector<collectors::BlockDevice>> block_devices_;
  bool discovery_ok_ = false;
  ParseErrorCount parse_errors_;
};

}  // namespace iowatch::daemon
