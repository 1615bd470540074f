// The cgroups doing the most I/O over the last interval, from a Snapshot's
// per-cgroup series (the numbers /metrics serves), summed over devices (or
// one device), sorted by bytes per second, read plus written: what `iowatch
// iotop` prints and the status page's "Top I/O" table shows.
// Thread-safety: pure function.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "daemon/sampling/snapshot.h"

namespace iowatch::daemon {

struct CgroupTopRow {
  std::string cgroup;
  std::string unit;
  double read_bytes_per_second = 0;
  double write_bytes_per_second = 0;
  double reads_per_second = 0;
  double writes_per_second = 0;
  std::optional<double> pressure_some_avg10;  // io.pressure avg10, percent (v2 only)
};

// Rows with rates, sorted by read + write bytes/s (descending), the deeper
// cgroup first among equals, then path;
// `device` "" sums every device.
std::vector<CgroupTopRow> CgroupTop(const Snapshot& snapshot, const std::string& device);

}  // namespace iowatch::daemon
