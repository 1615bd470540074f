// Baselines and regression detection. A baseline is learned from runs of
// one class (clean, or one foreign-load band: run_class.h; JudgeRun in
// job_judge.h picks them): per (op, metric) the median and the median
// absolute deviation (MAD, scaled by 1.4826 to estimate a standard
// deviation), the spread at least a floor × the median. A later run is
// compared metric by metric: it is bad when it is worse than the median by
// more than max(tolerance × median, k × spread), tolerance being the
// throughput, latency or latency-tail tolerance by metric; a latency
// quantile must also rest on enough I/Os and leave the confidence intervals
// (quantile_rules.h). RegressionTracker adds hysteresis: K consecutive bad
// runs spanning at least min_bad_span raise a regression, K consecutive good
// ones clear it, and each state change is reported once.
//
// Why these choices keep false alarms rare. Median and MAD because N is
// small: one wild run in ten moves the median only to the next value and
// barely changes the MAD, where it would drag a mean and a standard
// deviation towards itself. The threshold takes the larger term so that a
// baseline of identical runs still has the tolerance, and a genuinely noisy
// disk is judged against its own noise. The spread floor keeps ten calm runs
// from making the next ordinary one look wild. Then K: with a 20 % throughput
// tolerance and run-to-run noise σ ≈ 5 %, a run is bad only 4.5σ below the
// median, and K = 3 needs three in a row. What remains is the baseline's own
// error, which is why it is learned from 10 runs over at least an hour
// (measured on synthetic lognormal series, tests/bench/baseline_false_alarms:
// 10 runs cut the false alarms of a noisy disk ~5× against 5), and why runs
// slowed by others' I/O are never compared with a clean baseline. The
// figures on recorded runs of this machine are in docs/benchmarks.md
// ("Regression verdicts: false alarms and detections").
//
// Thread-safety: plain values and pure functions; RegressionTracker has one owner.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "probes/verdicts/run_class.h"
#include "probes/verdicts/run_metrics.h"
#include "probes/verdicts/run_record.h"

namespace iowatch::probes {

struct BaselinePolicy {
  uint32_t runs = 10;  // clean (or same-band) runs a baseline is learned from
  // The runs must span at least this from the first to the last, so that one
  // quiet minute does not become the norm (ms).
  int64_t min_age_ms = int64_t{3600} * 1000;
  double throughput_tolerance = 0.20;  // iops, bandwidth: 20 % lower is bad
  double latency_tolerance = 0.50;     // means and p50/p90: 50 % higher is bad
  double tail_tolerance = 0.50;        // p99 and above
  double spread_factor = 3;            // k: k × spread beats the tolerance when noisier
  uint32_t hysteresis = 3;             // K consecutive bad (good) runs raise (clear)
  // ... and the bad runs span at least this, from the first's start to the
  // last's end: a host's stall under a virtual disk lasts tens of seconds
  // (the busy recording of docs/benchmarks.md, "A busy disk on a shared CPU":
  // three runs 2-3x slower over 35 s, fine after), and probes every 10-15 s
  // would take it for a regression.
  int64_t min_bad_span_ms = 45'000;
  // The spread is at least this share of the median, by kind of metric: ten
  // calm runs would otherwise give a spread that the next ordinary one beats.
  double throughput_spread_floor = 0.05;
  double latency_spread_floor = 0.10;
  double tail_spread_floor = 0.20;
  // k of the sample-count rule (quantile_rules.h): a quantile q is judged
  // only from k / (1 − q) I/Os; 0 turns the rule off.
  uint32_t quantile_samples = 50;
  // The confidence of the order-statistic intervals a quantile's shift must
  // leave (quantile_rules.h); 0 turns the rule off.
  double quantile_confidence = 0.99;
  // The metrics judged (BaselineMetrics() names); empty: those judged by
  // default (throughput and total latency). Every metric is still learned.
  std::vector<std::string> metrics;
  ContentionPolicy contention;

  bool operator==(const BaselinePolicy&) const = default;
  // The metric is in `metrics`, or `metrics` is empty and it is judged by default.
  bool Judges(const MetricSpec& spec) const;
};

struct MetricBaseline {
  std::string op;
  std::string metric;
  double median = 0;
  double spread = 0;  // 1.4826 × MAD, at least the policy's floor × median
  // For a quantile: the I/Os of its runs pooled and the order-statistic
  // interval of the quantile over them (quantile_rules.h); 0 when not known
  // (another metric, an imported baseline, one stored before the load bands).
  uint64_t samples = 0;
  double interval_low = 0;
  double interval_high = 0;
  bool operator==(const MetricBaseline&) const = default;
};

struct Baseline {
  std::string job;
  std::string fingerprint;  // JobFingerprint of the job's parameters
  std::string device;       // "major:minor" of the target
  std::string model;        // device model where known
  int band = kCleanBand;    // the runs' class: clean, or a foreign-load band (run_class.h)
  int64_t created_unix_ms = 0;
  std::vector<int64_t> run_ids;  // the runs it was built from (store ids)
  std::vector<MetricBaseline> metrics;
  bool operator==(const Baseline&) const = default;

  const MetricBaseline* Find(std::string_view op, std::string_view metric) const;
};

// Median of `values` (reordered); the mean of the two middle values for an
// even count, so that two runs give their midpoint rather than either one.
double Median(std::vector<double>& values);
// 1.4826 × the median absolute deviation of `values` from their median: a
// standard deviation that one wild value cannot inflate.
double RobustSpread(std::vector<double> values);
// The least spread a baseline of the metric keeps, as a share of its median
// (the policy's floor for its kind).
double SpreadFloorFor(const MetricSpec& spec, const BaselinePolicy& policy);
// How much worse than its baseline one run of the metric may be: the
// policy's throughput, latency or tail tolerance.
double ToleranceFor(const MetricSpec& spec, const BaselinePolicy& policy);

// Median/MAD per (op, metric) over `runs` (each the ExtractMetrics of one run),
// in order of first appearance; an even count takes the mean of the two middle
// values. A metric missing from some runs is built from the runs that have it.
std::vector<MetricBaseline> LearnMetrics(std::span<const std::vector<MetricSample>> runs);

// The one way a baseline is built, by the daemon (from a band's first runs,
// PickLearningRuns) and by `iowatch baseline capture` (from its last N): the
// job, fingerprint and device of the runs (all the same), the model of the
// newest of them, their ids, LearnMetrics over their metrics with the
// policy's spread floors; a quantile metric only from the runs with enough
// I/Os for it (dropped unless at least half of them have), with its pooled
// interval. `runs` must not be empty.
Baseline LearnBaseline(std::span<const RunRecord> runs, int64_t created_unix_ms,
                       const BaselinePolicy& policy = {});

// Which of a band's candidate runs (their start times, oldest first) a
// baseline is learned from: nullopt until there are policy.runs of them and
// the newest started at least policy.min_age_ms after the oldest; then
// policy.runs indices spread evenly over them, the first and last included.
std::optional<std::vector<size_t>> PickLearningRuns(std::span<const int64_t> start_unix_ms,
                                                    const BaselinePolicy& policy);

struct MetricVerdict {
  std::string op;
  std::string metric;
  double value = 0;
  double baseline = 0;
  double ratio = 0;      // value / baseline (0 when the baseline is 0)
  double threshold = 0;  // the allowed distance from the baseline, same unit as value
  bool bad = false;
  // False when the run cannot carry the metric (too few I/Os for the
  // quantile): not bad, and it leaves the hysteresis as it was.
  bool judged = true;
  std::string note;  // why not judged, or why a shift was not bad; "" otherwise
  bool operator==(const MetricVerdict&) const = default;
};

// Compares one run with a baseline, in the run's order; metrics absent from
// either side, not in BaselineMetrics() (no known worse direction), or not
// judged by the policy are skipped. An improvement is never bad, however
// large. A metric whose baseline median is 0 is never bad: the tolerance has
// nothing to scale and any value would be "infinitely" worse. With the run's
// `result`, a quantile is also subject to quantile_rules.h: not judged from
// too few I/Os, and not bad while its interval overlaps the baseline's.
std::vector<MetricVerdict> Compare(const Baseline& baseline, std::span<const MetricSample> run,
                                   const BaselinePolicy& policy,
                                   const ProbeResult* result = nullptr);

struct RegressionChange {
  std::string op;
  std::string metric;
  bool regressed = false;  // the new state
  MetricVerdict verdict;   // the run that flipped it
  // A latency quantile cleared with its op's mean or throughput (that
  // metric's name, whose verdict `verdict` is); empty when its own verdicts
  // flipped it. RegressionTracker says when.
  std::string with;
  // Raised or cleared by the drift watch (drift_watch.h: evidence added up
  // over many runs against the series' first day), not by one run's
  // hysteresis; `verdict.ratio` is then the smoothed ratio to that reference.
  bool drift = false;
  // On a raise, when the slowdown began: the start of the first bad run of
  // the streak that raised it (hysteresis), or of the run where a drift's
  // evidence began; 0 when unknown. A drift's clear keeps its start.
  int64_t since_ms = 0;
  bool operator==(const RegressionChange&) const = default;
};

// Hysteresis per (op, metric) of one series: K consecutive bad verdicts
// raise, K consecutive good ones clear, and each state change is reported
// once. A metric missing from a run leaves its state as it was. K = 0 acts
// as 1.
//
// Only a good verdict that could have seen the shift counts against it. A
// series is judged in several bands (run_class.h), each against its own
// spread: a quiet band may allow 50 % while a busy band that learned a wild
// neighbour allows 300 %. A slowdown of 2× is bad in the first and good in
// the second, so runs alternating between them would never make K bad in a
// row if the wide band's good runs broke the streak. A good verdict is
// therefore informative only when its allowed distance (threshold /
// baseline) and its own shift are both below the smallest shift of the
// streak it would break (the bad runs', or those that raised the regression);
// an uninformative one leaves the streaks as they were. A clean run judged
// against the clean baseline (a median no neighbour moved) whose own shift
// is below half the streak's is informative too, however wide its spread:
// otherwise a wide clean spread lets three bad runs of other bands, hours
// apart, add up across a day of runs at the disk's normal level. Bad
// verdicts always count: any band's bad run is evidence.
//
// A regression is a lasting state, not an episode: the K bad runs must also
// span min_bad_span (BaselinePolicy), so that three runs in 35 s of a
// host's write stall are not one; at the bundled 15-minute schedule K runs
// span far more and the rule never binds.
//
// A latency quantile is judged in clean runs only (a burst beside a run
// moves it by as many I/Os as it overlapped), which a busy disk may not see
// for hours. So a quantile's regression raised while its op's mean or
// throughput was regressed (the same slowdown) clears with it: when that
// metric clears, the quantile does too, unless it was bad in that run. One
// raised before it, or alone, waits for its own good runs.
class RegressionTracker {
 public:
  static constexpr double kNoShift = std::numeric_limits<double>::infinity();
  // One (op, metric)'s streaks and standing regression.
  struct Streaks {
    bool regressed = false;
    uint32_t bad_streak = 0;
    uint32_t good_streak = 0;
    // The smallest relative shift of the bad runs in the current streak, or
    // of those since the regression was raised; +inf when there are none.
    double shift = kNoShift;
    // When the current bad streak's first run started (ms since the epoch);
    // 0 when there is none, or for a streak stored before it was kept.
    int64_t bad_since_ms = 0;
    // When the standing regression was raised (the raising run's end); 0
    // when none stands, or for one stored before it was kept.
    int64_t raised_ms = 0;
    // The start of the first bad run of the streak that raised the standing
    // regression: since when the metric is bad (alerts and logs say it); 0
    // when none stands, or for one stored before it was kept.
    int64_t since_ms = 0;
    bool operator==(const Streaks&) const = default;
  };
  // One (op, metric)'s state, as the store keeps it across restarts.
  struct Entry {
    std::string op;
    std::string metric;
    Streaks streaks;
    bool operator==(const Entry&) const = default;
  };

  explicit RegressionTracker(uint32_t hysteresis = 3, int64_t min_bad_span_ms = 0)
      : hysteresis_(hysteresis), min_bad_span_ms_(min_bad_span_ms) {}
  // The policy's rule (hysteresis and min_bad_span), the one the daemon uses.
  static RegressionTracker For(const BaselinePolicy& policy) {
    return RegressionTracker(policy.hysteresis, policy.min_bad_span_ms);
  }
  // Feeds one run's verdicts (those not judged are passed over), the run
  // having measured from start_ms to end_ms; returns the state changes it
  // caused. `at_own_level`: a clean run's verdicts against the clean
  // baseline, whose median is the disk's own level.
  std::vector<RegressionChange> Update(std::span<const MetricVerdict> verdicts,
                                       int64_t start_ms = 0, int64_t end_ms = 0,
                                       bool at_own_level = false);
  bool Regressed(std::string_view op, std::string_view metric) const;
  // Streaks::since_ms of the metric's standing regression; 0 when none
  // stands (or its start is unknown).
  int64_t RegressedSinceMs(std::string_view op, std::string_view metric) const;
  bool AnyRegressed() const;
  // A bad streak not yet raised nor broken by an informative good verdict.
  bool AnyPending() const;
  uint32_t Hysteresis() const { return hysteresis_; }
  void Reset() { states_.clear(); }
  std::vector<Entry> Entries() const;
  void Restore(std::span<const Entry> entries);

 private:
  // Clears the op's quantiles raised since `raised_ms` that `verdicts` did
  // not find bad, as recovered with `change`'s metric.
  void ClearQuantilesWith(const RegressionChange& change, int64_t raised_ms,
                          std::span<const MetricVerdict> verdicts,
                          std::vector<RegressionChange>& changes);
  uint32_t hysteresis_;
  int64_t min_bad_span_ms_;
  std::map<std::pair<std::string, std::string>, Streaks, std::less<>> states_;
};

// How much worse than its baseline a verdict's value is, relative to the
// baseline (0.8 for a latency 1.8 times the median, 0.3 for IOPS at 70 %),
// never below 0; +inf when the baseline is 0.
double RelativeShift(const MetricVerdict& verdict);

}  // namespace iowatch::probes
