// The report of `iowatch iotop` (rows: daemon/sampling/cgroup_top.h) as a
// table, or as one JSON document.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "daemon/sampling/cgroup_top.h"

namespace iowatch::daemon {

// At most `max_rows` rows (0: all), under a header line with the time.
std::string FormatIotopText(const std::vector<CgroupTopRow>& rows, const std::string& time,
                            const std::string& device, size_t max_rows);
std::string FormatIotopJson(const std::vector<CgroupTopRow>& rows, const std::string& time,
                            const std::string& device, double interval_seconds);

}  // namespace iowatch::daemon
