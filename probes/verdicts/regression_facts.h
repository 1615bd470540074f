// RegressionFacts: what explains one standing regression, in one place for
// the daemon's journal line, its status page and `iowatch baseline show`:
// which metric, how much worse (the ratio to the baseline or prediction the
// last judged run was judged against, and to the series' commissioning
// reference, the drift watch's first day), since when (the first bad run's
// start), and judged against what: when the baseline's runs and the
// reference's ran and the load and CPU steal they ran under, beside the
// judged run's. The exported series (docs/metrics.md) carry the same figures
// for the alert's annotations.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "probes/verdicts/job_judge.h"
#include "probes/verdicts/run_conditions.h"

namespace iowatch::probes {

// A set of a series' runs (a baseline's, the drift reference's): when they
// ran, and the median load and steal of those whose conditions are known.
struct RunsSummary {
  size_t runs = 0;  // of the ids, those found among the series' runs
  int64_t first_start_ms = 0;
  int64_t last_start_ms = 0;
  size_t with_conditions = 0;          // runs whose conditions were measured
  std::optional<double> foreign_load;  // median ForeignLoad, weighted requests/s
  std::optional<double> cpu_steal;     // median share of the CPUs' time stolen
  bool operator==(const RunsSummary&) const = default;
};

// The runs of `ids` among `candidates` (a series' successful runs, as
// BaselineSource::Candidates gives them); nullopt when none is there (an
// imported baseline, runs pruned by the retention).
std::optional<RunsSummary> SummarizeRuns(std::span<const int64_t> ids,
                                         std::span<const LearningCandidate> candidates);

// Since when the metric's standing regression stands: the first bad run of
// the streak that raised it, or of a drift's evidence; the earlier when both
// stand; 0 when none stands, or its start is unknown.
int64_t RegressedSinceMs(const SeriesState& series, const std::string& op,
                         const std::string& metric);

// One run's load and steal, as the summaries count them.
struct RunLoad {
  double foreign_load = 0;  // ForeignLoad, weighted requests/s
  double cpu_steal = 0;
  bool operator==(const RunLoad&) const = default;
};
std::optional<RunLoad> LoadOf(const std::optional<RunConditions>& conditions);

struct RegressionFacts {
  std::string op;
  std::string metric;
  // The last judged run's value / its baseline or prediction (0: unknown).
  double ratio = 0;
  // The metric's smoothed value / the commissioning reference's (drift).
  std::optional<double> drift_ratio;
  int64_t since_ms = 0;                  // the first bad run's start; 0 unknown
  std::optional<RunsSummary> baseline;   // the runs the baseline was made of
  std::optional<RunsSummary> reference;  // the drift watch's first day
  std::optional<RunLoad> run;            // the last judged run's
};

// "2026-12-04T10:15:00Z".
std::string FormatUtcIso(int64_t unix_ms);

// One line, for the journal and the CLI, after the op and metric:
// "0.50x its baseline, 0.93x its first day; bad since
// 2026-12-04T10:15:00Z; judged against 10 runs of 2026-12-01T08:00:00Z to
// 2026-12-01T10:00:00Z (load 12/s, steal 1.0 %), first day 96 runs of …;
// the judged run: load 850/s, steal 3.0 %". Parts not known are left out.
// `time` formats a time (UTC ISO 8601 by default; the CLI's is local).
std::string ExplainRegression(const RegressionFacts& facts,
                              const std::function<std::string(int64_t)>& time = FormatUtcIso);

// The parts of that line, for a page that sets them apart: the ratios
// ("0.50x its baseline, 0.93x its first day"), since ("2026-12-04T10:15:00Z";
// "unknown"), against (the baseline's and reference's runs) and the run's
// load ("load 850/s, steal 3.0 %"; "" unknown).
std::string DescribeRatios(const RegressionFacts& facts);
std::string DescribeAgainst(const RegressionFacts& facts,
                            const std::function<std::string(int64_t)>& time = FormatUtcIso);
std::string DescribeLoad(const RunLoad& load);

}  // namespace iowatch::probes
