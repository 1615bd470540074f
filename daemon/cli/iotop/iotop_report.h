// The report of `iowatch iotop`: the cgroups doing the most I/O over the
// last interval, from a Snapshot's per-cgroup series (the numbers /metrics
// serves), summed over devices (or one device with -d), sorted by bytes per
// second, read plus written. Text as a table, or one JSON document.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "daemon/sampling/snapshot.h"

namespace iowatch::daemon {

struct IotopRow {
  std::string cgroup;
  std::string unit;
  double read_bytes_per_second = 0;
  double write_bytes_per_second = 0;
  double reads_per_second = 0;
  double writes_per_second = 0;
  std::optional<double> pressure_some_avg10;  // io.pressure avg10, percent (v2 only)
};

// Rows with rates, sorted by read + write bytes/s (descending), then path.
std::vector<IotopRow> IotopRows(const Snapshot& snapshot, const std::string& device);

// At most `max_rows` rows (0: all), under a header line with the time.
std::string FormatIotopText(const std::vector<IotopRow>& rows, const std::string& time,
                            const std::string& device, size_t max_rows);
std::string FormatIotopJson(const std::vector<IotopRow>& rows, const std::string& time,
                            const std::string& device, double interval_seconds);

}  // namespace iowatch::daemon
