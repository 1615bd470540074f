// The Prometheus view of a Snapshot: raw counters under node_exporter's
// names (iowatch_disk_*, iowatch_memory_*, iowatch_vmstat_*, iowatch_cpu_*),
// the derived iostat and vmstat series with their window maxima, device and
// md information, and the collectors' own health. docs/metrics.md lists
// every family this produces.
// Thread-safety: pure function of an immutable snapshot.
#pragma once

#include <string>

#include "daemon/snapshot.h"

namespace iowatch::daemon {

std::string RenderSnapshot(const Snapshot& snapshot);

}  // namespace iowatch::daemon
