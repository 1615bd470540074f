// LoadModel: a probe series' throughput and mean latency as a function of
// the run's stress (run_stress.h), learned from its earlier runs, so that a
// run in conditions no band has learned yet (a load band never seen, a CPU
// the hypervisor keeps taking) is judged against what the disk does at *its*
// stress on day one (issue 27).
//
// Per judged metric that is not a quantile, least squares on
//   log(value) = a + b·log2(1 + load / 64) + b'·load / 4096 + c·steal + d·wait
// over the series' learnable runs, each slope constrained to the metric's
// worse direction (more stress never makes a healthy probe faster: a slope
// of the wrong sign, which noise or a narrow range can produce, is set to 0
// and the rest refitted). The run's prediction is the baseline's median, and
// its spread the residuals' robust spread (RobustSpread) widened by the
// line's own uncertainty at the run's stress, as a prediction interval is
// (σ·√(1 + h), h the run's leverage: larger towards the edges of what the
// runs cover), at least the policy's floor; so Compare judges the run as
// against a band's baseline. No
// prediction outside the stresses the fit has seen (a little slack aside):
// a line is not extrapolated. Quantiles are not modelled: a burst moves
// them by as many I/Os as it overlapped, which no load figure says.
//
// Why a model and not only bands: on a busy disk with a shared CPU the
// stress changes faster than bands fill (issue 27's run: 6 of 120 runs
// judged under an irregular load), and a run judged only against heavier
// ones misses what is lost in the gap between them; a line through all of
// them has the spread of the disk, not of the conditions.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "probes/baseline/baseline.h"
#include "probes/baseline/run_stress.h"

namespace iowatch::probes {

// Runs a fit needs at least (and policy.runs, whichever is more): four
// coefficients and a spread are not learned from ten runs.
inline constexpr size_t kMinModelRuns = 30;

// One earlier run as the model learns from it.
struct ModelPoint {
  int64_t id = 0;
  int64_t start_unix_ms = 0;
  RunStress stress;
  std::vector<MetricSample> metrics;
};

// The baseline's metrics the model predicts at `at` from `points`: the
// metrics judged by the policy that are not quantiles (job, device and the
// rest are the caller's to set; run_ids are the points'); nullopt when there
// are too few points, they span less than policy.min_age_ms, or `at` lies
// outside the stresses they cover.
std::optional<Baseline> ModelBaselineAt(const RunStress& at, std::span<const ModelPoint> points,
                                        const BaselinePolicy& policy);

}  // namespace iowatch::probes
