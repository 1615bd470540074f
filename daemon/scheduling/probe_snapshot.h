// ProbeSnapshot: what the probe recorder knows about every scheduled job, as
// of its last outcome: the last successful run's figures, the completion
// latency histogram accumulated over every run since start, the job's
// baseline with the last run's verdicts and regression states, and the
// store's health. The recorder builds a new one after each outcome and swaps
// it in whole; a scrape renders the one it got (probe_metrics_renderer.h)
// without ever waiting for a probe or for the store.
// Thread-safety: immutable after publication.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "probes/verdicts/baseline.h"
#include "probes/verdicts/book/judged_window.h"
#include "probes/verdicts/book/run_judge.h"
#include "probes/verdicts/regression_facts.h"
#include "probes/verdicts/run_class.h"
#include "probes/verdicts/run_conditions.h"
#include "probes/verdicts/run_metrics.h"

namespace iowatch::daemon {

// The `le` bounds of iowatch_probe_clat_seconds, in nanoseconds: 1, 2.5 and 5
// per decade from 10 µs to 10 s (+Inf is implied).
inline std::span<const uint64_t> ProbeClatBucketBoundsNs() {
  static constexpr std::array<uint64_t, 19> kBounds = {
      10'000,        25'000,        50'000,        100'000,       250'000,
      500'000,       1'000'000,     2'500'000,     5'000'000,     10'000'000,
      25'000'000,    50'000'000,    100'000'000,   250'000'000,   500'000'000,
      1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};
  return kBounds;
}

struct ProbeClatHistogram {
  std::string op;                    // "read" or "write"
  std::vector<uint64_t> cumulative;  // per ProbeClatBucketBoundsNs(): completions ≤ bound
  uint64_t count = 0;                // all completions (the +Inf bucket)
  double sum_seconds = 0;            // sum of their completion latencies
};

// A metric's verdict as published (the judge's, probes/verdicts/book).
using ProbeVerdict = probes::SeriesVerdict;

// A metric over the job's recent successful runs, oldest first (at most
// kRecentRuns), for the status page's sparklines.
struct ProbeRecentSeries {
  std::string op;
  std::vector<double> clat_p99_seconds;
};
inline constexpr size_t kRecentRuns = 48;

struct ProbeJobSnapshot {
  std::string name;
  // The last successful run (none yet: empty metrics, timestamp 0).
  std::vector<probes::MetricSample> last_metrics;  // probes::ExtractMetrics order
  double last_run_timestamp_seconds = 0;           // its start, seconds since the epoch
  double run_duration_seconds = 0;
  double cpu_seconds = 0;     // user + system
  uint32_t target_major = 0;  // the whole disk the last successful run measured
  uint32_t target_minor = 0;
  std::string workload;  // probes::WorkloadFingerprint of its job, the fleet's peer key
  std::vector<std::string> fallbacks;     // what its engine gave up, e.g. "fixedbufs"
  std::vector<ProbeClatHistogram> clat;   // ops in first-seen order
  std::vector<ProbeRecentSeries> recent;  // ops in first-seen order
  // What else the disk and host did during the last successful run
  // (nullopt: not measured).
  std::optional<probes::RunConditions> last_conditions;
  // How the last successful run was classified and judged: its class and
  // band, whether a baseline judged it and, if not, why (job_judge.h).
  probes::Classification last_class;
  bool last_judged = false;
  std::string last_not_judged;
  // Judged against runs of other conditions: what they were (RunJudgement::
  // against), "" when against its band's baseline or not judged.
  std::string last_against;
  // Who did the foreign I/O during a contended last run (ProbeRecorderOptions::
  // name_foreign_load), "" when clean or unknown.
  std::string last_foreign_who;
  // The last uncontended (clean) run's figures and start, kept across the
  // contended runs after it until the next clean one: the fleet rules' peer
  // input, which a busy disk's last run seldom is (none yet: empty, 0).
  std::vector<probes::MetricSample> uncontended_metrics;
  double uncontended_run_timestamp_seconds = 0;
  // The baseline the last successful run was compared with, if any.
  bool has_baseline = false;
  int baseline_band = 0;
  std::vector<probes::MetricBaseline> baseline;
  double baseline_created_seconds = 0;  // seconds since the epoch
  int64_t baseline_runs = 0;
  std::vector<ProbeVerdict> verdicts;
  // What the verdicts' run was judged against and under, to explain a
  // regression (probes/verdicts/regression_facts.h): the runs its baseline
  // or prediction was made of (none for an imported baseline), the drift
  // watch's first day once chosen, and the judged run's own load and steal.
  std::optional<probes::RunsSummary> judged_baseline_runs;
  std::optional<probes::RunsSummary> reference_runs;
  std::optional<probes::RunLoad> judged_load;
  // Whether the runs of the last 24 h were judged, why not, and the last
  // judged run (across restarts: the store keeps it).
  probes::JudgedSummary judging;
};

// What explains the verdict `v` of `job` (a regressed one, for the status
// page): its ratios, start, and what its run was judged against and under.
inline probes::RegressionFacts FactsOf(const ProbeJobSnapshot& job, const ProbeVerdict& v) {
  probes::RegressionFacts f;
  f.op = v.verdict.op;
  f.metric = v.verdict.metric;
  f.ratio = v.verdict.ratio;
  f.drift_ratio = v.drift_ratio;
  f.since_ms = v.since_ms;
  f.baseline = job.judged_baseline_runs;
  f.reference = job.reference_runs;
  f.run = job.judged_load;
  return f;
}

struct ProbeSnapshot {
  std::vector<ProbeJobSnapshot> jobs;  // configuration order
  bool store_up = false;               // the last store operation succeeded
  uint64_t store_errors_total = 0;     // runs whose storing or baseline work failed
};

}  // namespace iowatch::daemon
