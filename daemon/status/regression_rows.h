// The status page's rows under a regressed probe: one per regressed metric,
// what explains it (probes::ExplainRegression: how much worse against the
// baseline and the first day, since when, against which runs under what load
// beside the judged run's) and what else its disk shows now (its problems
// other than the probes' regressions, its SMART state, the busiest other
// cgroup on it, never the daemon's own).
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "daemon/sampling/snapshot_health.h"
#include "daemon/scheduling/probe_snapshot.h"
#include "daemon/status/status_page.h"

namespace iowatch::daemon {

// "" when none of the job's metrics is regressed.
std::string RegressionRows(const ProbeJobSnapshot& job, const StatusPageInput& in,
                           const HostHealth& health);

}  // namespace iowatch::daemon
