// CgroupSource: per-cgroup block I/O, once per sample. Detects which
// hierarchy counts I/O (again after a failure: cgroupfs mounted late), scans
// it (collectors/cgroup/cgroup_io.h) for the devices the iostat series
// report, and derives each cgroup x device pair's rates over the interval
// with their window maxima, as the iostat series have them, so "which unit
// did the burst at 03:12" is answered by one scrape. A pair whose counters
// went backwards (the cgroup was removed and re-created under its name)
// starts again with no rates. Reports the collector "cgroup".
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collectors/block_devices.h"
#include "collectors/cgroup/cgroup_io.h"
#include "common/file_tree.h"
#include "daemon/sampling/sample_source.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"
#include "daemon/sampling/window_max.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& CgroupSourceDescriptor();

// The families it renders (cgroup_families.cc).
void AddCgroupFamilies(TableBuilder& t);

class CgroupSource : public SampleSource {
 public:
  // Fills out.cgroups for the devices in context.devices and appends the
  // collector's status; nothing when disabled. Rates are over the interval
  // /proc/uptime measures since the previous sample.
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  struct PairState {
    collectors::CgroupDeviceIo previous;
    std::array<WindowMax, kCgroupRateCount> windows;
    uint64_t tick = 0;  // last sample that saw the pair
  };
  void Derive(const collectors::CgroupIo& cgroup, const collectors::CgroupDeviceIo& io,
              const std::string& device, double interval_seconds, uint64_t tick,
              uint64_t window_samples, CgroupSnapshot& out);

  std::optional<collectors::CgroupLayout> layout_;
  std::optional<uint64_t> previous_uptime_cs_;
  std::map<std::string, PairState, std::less<>> pairs_;  // "cgroup\0device"
  uint64_t skipped_total_ = 0;                           // malformed cgroup files since start
};

}  // namespace iowatch::daemon
