// LoadModel: a probe series' throughput and mean latency as a function of
// the run's stress (run_stress.h), learned from its earlier runs, so that a
// run in conditions no band has learned yet (a load band never seen, a CPU
// the hypervisor keeps taking) is judged against what the disk does at *its*
// stress on day one (a busy disk on a shared CPU would otherwise go unjudged).
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
// against a band's baseline.
//
// A stress gets a slope only where the runs spread over it (RunShape in
// load_model.cc: a load band, two points of steal, four of wait, each with
// five runs clearly away from the lightest): two odd runs at a steal one
// clock tick above the rest would otherwise make a slope that multiplies
// the prediction by e^13 at a tenth of a point of steal. No prediction
// above the stresses the runs cover, beyond a tenth of the covered range
// where a stress has a slope and not at all where it has none: a line is
// not extrapolated (the caller judges such a run against runs at least as
// stressed, or not at all). A run lighter than every run in a stress is
// predicted at the lightest they cover, which a healthy run is no worse
// than (as run_stress.h judges). Quantiles are not modelled: a burst moves
// them by as many I/Os as it overlapped, which no load figure says.
//
// Why a model and not only bands: on a busy disk with a shared CPU the
// stress changes faster than bands fill (the busy recording: 6 of 120 runs
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
#include <string>
#include <vector>

#include "probes/verdicts/baseline.h"
#include "probes/verdicts/log_linear_fit.h"
#include "probes/verdicts/run_stress.h"

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

// What the model says at a run's stress.
struct ModelPrediction {
  // The baseline's metrics predicted at the stress: the metrics judged by the
  // policy that are not quantiles (job, device and the rest are the caller's
  // to set; run_ids are the points'). nullopt when there are too few points,
  // they span less than policy.min_age_ms, no metric could be fitted, or the
  // stress lies above what they cover.
  std::optional<Baseline> baseline;
  // Set only when the points sufficed and the stress lies above the
  // stresses they cover (or a prediction there would not be a finite figure):
  // where, for logs and the status page, e.g. "steal 0.1 % above the
  // 0–0.002 % its 40 runs covered (no slope: none beyond them)".
  std::string outside;
};

ModelPrediction ModelBaselineAt(const RunStress& at, std::span<const ModelPoint> points,
                                const BaselinePolicy& policy);

}  // namespace iowatch::probes
