// How `iowatch sweep` prints a sweep: a table (a row per point, then the
// findings) and a self-contained SVG (no script, no external reference): per
// mode, direction and pattern, a row of two panels — bandwidth (linear) and
// p99 (log) against block size, one line with a dot per point for each
// iodepth, a legend of the depths, ticks at round values. The latency shown
// is the report's (lat unless --latency=clat).
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "probes/sweep/sweep_report.h"

namespace iowatch::daemon {

std::string SweepTable(const probes::SweepReport& report);
std::string SweepSvg(const probes::SweepReport& report);

}  // namespace iowatch::daemon
