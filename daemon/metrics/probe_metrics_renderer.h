// The Prometheus view of the scheduled probes: the last successful run's
// figures per job and op, a cumulative completion latency histogram per job
// and op (over every run since start, so histogram_quantile works across runs
// and hosts), the baselines with their ratios and regression states, the
// scheduler's run and skip counts and per-device running gauge, and the
// store's health. docs/metrics.md lists every family.
//
// The text is small (a few dozen lines per job), so it is rendered whole at
// scrape time, from the recorder's immutable ProbeSnapshot and a copy of the
// scheduler's status; families come sorted by name, as a block of their own
// between the sample's families and iowatch's self metrics.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "daemon/scheduling/probe_run.h"
#include "daemon/scheduling/probe_snapshot.h"

namespace iowatch::daemon {

// Appends the probe families to `out`. `now_seconds` (wall clock) gives the
// baselines' age.
void RenderProbeMetrics(const ProbeSnapshot& recorded, const SchedulerStatus& scheduler,
                        double now_seconds, std::string& out);

// The families of the runs alone (no scheduler, no store: interval, running
// and store_up left out), for `iowatch probe --push-gateway`.
void RenderProbeRunMetrics(const ProbeSnapshot& runs, double now_seconds, std::string& out);

// Every family RenderProbeMetrics can produce, in output order.
std::vector<std::string_view> ProbeMetricFamilyNames();

}  // namespace iowatch::daemon
