// Snapshot: everything one sample produced, immutable once published. The
// sampler builds a new one every interval and swaps it in; scrapes read the
// current one without ever waiting for a sample (or, later, a probe). The
// Prometheus text of a snapshot is rendered on first use and cached, so many
// scrapes of one sample cost one rendering, and an unscraped daemon renders
// nothing.
// Thread-safety: immutable after publication, except the render cache, which
// is filled once under std::call_once.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "collectors/block_devices.h"
#include "collectors/diskstats.h"
#include "collectors/meminfo.h"
#include "collectors/named_values.h"
#include "collectors/proc_stat.h"

namespace iowatch::daemon {

struct DeviceSnapshot {
  std::string name;
  collectors::DiskCounters counters;
  bool has_rates = false;          // false for a device's first sample
  bool counters_reset = false;     // the last interval saw counters go backwards
  std::vector<double> latest;      // IostatSeriesTable() order
  std::vector<double> window_max;  // same order
};

struct CollectorStatus {
  std::string name;  // "diskstats", "stat", "meminfo", "vmstat", "sysfs"
  double duration_seconds = 0;
  bool success = false;
  uint64_t parse_errors_total = 0;  // malformed lines skipped since start
};

struct Snapshot {
  uint64_t sequence = 0;
  double timestamp_seconds = 0;  // wall clock when the sample was taken
  double interval_seconds = 1;
  double window_seconds = 60;
  double user_hz = 100;                                // /proc/stat ticks per second
  std::vector<DeviceSnapshot> devices;                 // filtered, sorted by name
  std::vector<collectors::BlockDevice> block_devices;  // filtered, sorted by name
  std::optional<collectors::ProcStat> stat;
  std::optional<collectors::Meminfo> meminfo;
  std::optional<collectors::NamedValues> vmstat;
  bool has_vm_rates = false;
  std::vector<double> vm_latest;  // VmstatSeriesTable() order
  std::vector<double> vm_window_max;
  std::vector<CollectorStatus> collectors;

  // The Prometheus text of everything above, rendered once on demand.
  const std::string& Rendered() const;

 private:
  mutable std::once_flag rendered_once_;
  mutable std::string rendered_;
};

}  // namespace iowatch::daemon
