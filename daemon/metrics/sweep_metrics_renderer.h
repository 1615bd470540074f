// A sweep's points as Prometheus families, for `iowatch sweep
// --push-gateway`: per point that completed, labelled device, mode
// (buffered|direct|raw), rw (read|write), pattern (random|sequential), bs
// (bytes) and iodepth — a bounded set, the grid's:
//   iowatch_sweep_iops, iowatch_sweep_bandwidth_bytes_per_second,
//   iowatch_sweep_clat_seconds{stat=p50|p99}, iowatch_sweep_cpu_ratio,
//   iowatch_sweep_cpu_seconds_per_gibibyte
// and iowatch_sweep_timestamp_seconds{device}, when the sweep started.
// docs/metrics.md lists them.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "probes/sweep/sweep_report.h"

namespace iowatch::daemon {

void RenderSweepMetrics(const probes::SweepReport& report, std::string& out);

}  // namespace iowatch::daemon
