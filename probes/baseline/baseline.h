// Baselines and regression detection. A baseline is learned from the first N
// successful runs of a job (same parameter fingerprint, same device): per
// (op, metric) the median and the median absolute deviation (MAD, scaled by
// 1.4826 to estimate a standard deviation). A later run is compared metric by
// metric: it is bad when it is worse than the median by more than
// max(tolerance × median, k × spread), tolerance being the throughput, latency
// or latency-tail tolerance by metric. RegressionTracker adds hysteresis: K
// consecutive bad runs raise a regression, K consecutive good runs clear it,
// and each state change is reported once.
//
// Why these choices keep false alarms rare. Median and MAD because N is small:
// one wild run in five (a neighbour's backup) moves the median only to the
// next value and barely changes the MAD, where it would drag a mean and a
// standard deviation half-way to itself. The threshold takes the larger term
// so that a baseline of identical runs (MAD 0) still has the tolerance, and a
// genuinely noisy disk is judged against its own noise. Then K: with a 20 %
// throughput tolerance and run-to-run noise σ ≈ 5 %, a run is bad only 4.5σ
// below the median (ln 0.8 = −0.22), about 3·10⁻⁶ per run, and K = 3 needs
// three in a row (~10⁻¹⁷). What remains is the baseline's own error: a median
// of 5 runs is off by ~0.56σ (one standard error), and an unlucky baseline
// eats into the margin for every run after it. At σ = 8 % (15 % on p99
// against its 50 % tolerance) the margin is under 3σ, so such a baseline makes
// a bad run a few percent likely and three in a row ~10⁻⁴. Measured on
// synthetic lognormal series (tests/unit/probes/baseline_test.cc): 0.25
// false alarms per 10,000 runs, against none with an exact baseline; at 10 %
// / 20 % noise, 5.8 against 0.015. On noisy disks the cure is a baseline
// learned from more runs (runs = 10: 1.2) or a larger K (K = 5: 0.14), at the
// price of detecting K runs after the step.
//
// Thread-safety: plain values and pure functions; RegressionTracker has one owner.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probes/baseline/run_metrics.h"
#include "probes/baseline/run_record.h"

namespace iowatch::probes {

struct BaselinePolicy {
  uint32_t runs = 5;                   // successful runs a baseline is learned from
  double throughput_tolerance = 0.20;  // iops, bandwidth: 20 % lower is bad
  double latency_tolerance = 0.50;     // means and p50/p90: 50 % higher is bad
  double tail_tolerance = 0.50;        // p99 and above
  double spread_factor = 3;            // k: k × spread beats the tolerance when noisier
  uint32_t hysteresis = 3;             // K consecutive bad (good) runs raise (clear)

  bool operator==(const BaselinePolicy&) const = default;
};

struct MetricBaseline {
  std::string op;
  std::string metric;
  double median = 0;
  double spread = 0;  // 1.4826 × MAD
  bool operator==(const MetricBaseline&) const = default;
};

struct Baseline {
  std::string job;
  std::string fingerprint;  // JobFingerprint of the job's parameters
  std::string device;       // "major:minor" of the target
  std::string model;        // device model where known
  int64_t created_unix_ms = 0;
  std::vector<int64_t> run_ids;  // the runs it was built from (store ids)
  std::vector<MetricBaseline> metrics;
  bool operator==(const Baseline&) const = default;

  const MetricBaseline* Find(std::string_view op, std::string_view metric) const;
};

// Median/MAD per (op, metric) over `runs` (each the ExtractMetrics of one run),
// in order of first appearance; an even count takes the mean of the two middle
// values. A metric missing from some runs is built from the runs that have it.
std::vector<MetricBaseline> LearnMetrics(std::span<const std::vector<MetricSample>> runs);

// The one way a baseline is built, by the daemon (from a job's first N
// successful runs) and by `iowatch baseline capture` (from its last N): the
// job, fingerprint and device of the runs (all the same), the model of the
// newest of them, their ids, LearnMetrics over their metrics. `runs` must not
// be empty.
Baseline LearnBaseline(std::span<const RunRecord> runs, int64_t created_unix_ms);

struct MetricVerdict {
  std::string op;
  std::string metric;
  double value = 0;
  double baseline = 0;
  double ratio = 0;      // value / baseline (0 when the baseline is 0)
  double threshold = 0;  // the allowed distance from the baseline, same unit as value
  bool bad = false;
  bool operator==(const MetricVerdict&) const = default;
};

// Compares one run with a baseline, in the run's order; metrics absent from
// either side, or not in BaselineMetrics() (no known worse direction), are
// skipped. An improvement is never bad, however large. A metric whose baseline
// median is 0 is never bad: the tolerance has nothing to scale and any value
// would be "infinitely" worse.
std::vector<MetricVerdict> Compare(const Baseline& baseline, std::span<const MetricSample> run,
                                   const BaselinePolicy& policy);

struct RegressionChange {
  std::string op;
  std::string metric;
  bool regressed = false;  // the new state
  MetricVerdict verdict;   // the run that flipped it
  bool operator==(const RegressionChange&) const = default;
};

// Hysteresis per (op, metric) of one job: K consecutive bad verdicts raise,
// K consecutive good ones clear, and a verdict of the other kind restarts the
// streak. A metric missing from a run leaves its state as it was. K = 0 acts
// as 1.
class RegressionTracker {
 public:
  explicit RegressionTracker(uint32_t hysteresis = 3) : hysteresis_(hysteresis) {}
  // Feeds one run's verdicts; returns the state changes it caused.
  std::vector<RegressionChange> Update(std::span<const MetricVerdict> verdicts);
  bool Regressed(std::string_view op, std::string_view metric) const;
  void Reset() { states_.clear(); }

 private:
  struct State {
    bool regressed = false;
    uint32_t bad_streak = 0;
    uint32_t good_streak = 0;
  };
  uint32_t hysteresis_;
  std::map<std::pair<std::string, std::string>, State, std::less<>> states_;
};

}  // namespace iowatch::probes
