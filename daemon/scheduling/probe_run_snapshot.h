// One probe run's figures as ProbeJobSnapshot holds them, for the recorder
// (the daemon's jobs, whose histograms it adds up across runs) and for the
// one-shot pushes of `iowatch probe --push-gateway` (one run, its own
// histograms): both then render through the same probe_metrics_renderer, so
// a pushed series is the daemon's series.
// Thread-safety: pure functions.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "daemon/scheduling/probe_snapshot.h"
#include "probes/run/probe_result.h"
#include "probes/verdicts/run_metrics.h"

namespace iowatch::daemon {

// Sets the last successful run's fields: its metrics (probes::ExtractMetrics
// of `result`, extracted once by the caller), start, measured time, CPU time
// and the disk it measured.
void SetLastRun(ProbeJobSnapshot& job, const probes::ProbeResult& result,
                std::vector<probes::MetricSample> metrics, int64_t start_unix_ms, dev_t device);

// After the last run's classification is set: keeps its figures and start
// as the last uncontended run's when it was clean; a contended or unknown
// run leaves the previous clean one's in place.
void KeepIfUncontended(ProbeJobSnapshot& job);

// A latency histogram as iowatch_probe_clat_seconds' buckets.
ProbeClatHistogram Cumulative(const std::string& op, const probes::LatencyHistogram& histogram,
                              double sum_seconds);

// The sum of a direction's completion latencies, in seconds.
double ClatSumSeconds(const probes::DirectionStats& direction);

// One run alone: SetLastRun and the run's own clat histograms.
ProbeJobSnapshot OneRunSnapshot(const std::string& name, const probes::ProbeResult& result,
                                int64_t start_unix_ms, dev_t device);

}  // namespace iowatch::daemon
