// The derived series the daemon exports: one row per metric of every iostat
// -x column (per device) and every vmstat column (per host), in base units
// (bytes, seconds, ratios 0..1), with the function that extracts it from the
// parsers' structs. Sampler (which keeps their window maxima) and the
// metrics renderer both walk these tables, so a column is defined once.
// Thread-safety: immutable tables.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "collectors/disk/iostat.h"
#include "collectors/vm/vmstat.h"

namespace iowatch::daemon {

struct IostatSeries {
  const char* column;  // iostat -x's column header: "r/s", "rkB/s", "r_await", "%util", ...
  const char* metric;  // without the _window_max suffix
  const char* help;
  const char* op;  // value of the "op" label, nullptr when the series has none
  double (*value)(const collectors::IostatRow&);
};

struct VmstatSeries {
  const char* column;  // vmstat's column header: "r", "swpd", "bi", "us", ...
  const char* metric;
  const char* help;
  const char* label_name;  // nullptr when the series has no label
  const char* label_value;
  double (*value)(const collectors::VmstatRates&);
};

std::span<const IostatSeries> IostatSeriesTable();

// Whether a device's diskstats line has the fields `series` is computed
// from: the discard series need a 4.18+ line, the flush ones a 5.5+ line.
// iostat prints 0 where they are missing (sysstat does); the exports leave
// them out, as node_exporter does, so that "not reported" never reads as
// "no activity".
bool Reported(const IostatSeries& series, const collectors::DiskCounters& counters);
std::span<const VmstatSeries> VmstatSeriesTable();

// The index of the series of iostat's or vmstat's column `column` in its
// table (the table's size when there is none), for views that show some
// columns, such as the status page.
size_t IostatColumnIndex(std::string_view column);
size_t VmstatColumnIndex(std::string_view column);

}  // namespace iowatch::daemon
