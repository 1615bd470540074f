// CgroupSource: per-cgroup block I/O, once per sample. Detects which
// hierarchy counts I/O (again after a failure: cgroupfs mounted late), scans
// it (collectors/cgroup/cgroup_io.h) for the devices the iostat series
// report, and derives each cgroup x device pair's rates over the interval
// with their window maxima, as the iostat series have them, so "which unit
// did the burst at 03:12" is answered by one scrape. A pair whose counters
// went backwards (the cgroup was removed and re-created under its name)
// starts again with no rates. Reports the collector "cgroup".
// Thread-safety: not thread-safe; owned by the Sampler.
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
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/window_max.h"

namespace iowatch::daemon {

struct CgroupSourceOptions {
  bool enabled = true;
  size_t max_depth = 2;
  collectors::DeviceFilter filter;
  size_t max_pairs = 2000;
};

class CgroupSource {
 public:
  explicit CgroupSource(CgroupSourceOptions options) : options_(std::move(options)) {}
  void Reconfigure(CgroupSourceOptions options) { options_ = std::move(options); }

  // Fills out.cgroups from the devices in out.block_devices; the collector's
  // status, or nullopt when disabled. `interval_seconds` is the measured time
  // since the previous sample (0: unknown, no rates).
  std::optional<CollectorStatus> Collect(const FileTree& procfs, const FileTree& sysfs,
                                         double interval_seconds, uint64_t tick,
                                         uint64_t window_samples, Snapshot& out);

 private:
  struct PairState {
    collectors::CgroupDeviceIo previous;
    std::array<WindowMax, kCgroupRateCount> windows;
    uint64_t tick = 0;  // last sample that saw the pair
  };
  void Derive(const collectors::CgroupIo& cgroup, const collectors::CgroupDeviceIo& io,
              const std::string& device, double interval_seconds, uint64_t tick,
              uint64_t window_samples, CgroupSnapshot& out);

  CgroupSourceOptions options_;
  std::optional<collectors::CgroupLayout> layout_;
  std::map<std::string, PairState, std::less<>> pairs_;  // "cgroup\0device"
  uint64_t skipped_total_ = 0;                           // malformed cgroup files since start
};

}  // namespace iowatch::daemon
