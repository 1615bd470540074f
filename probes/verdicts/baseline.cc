#include "probes/verdicts/baseline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "probes/verdicts/quantile_rules.h"

namespace iowatch::probes {
namespace {

// MAD × 1.4826 estimates the standard deviation of normal data (1.4826 ≈
// 1 / Φ⁻¹(3/4)), so spread_factor reads as "k sigmas" while one wild run in
// the learning set cannot inflate it the way it would a standard deviation.
constexpr double kMadToSigma = 1.4826;

}  // namespace

double Median(std::vector<double>& values) {
  const size_t n = values.size();
  const auto mid = values.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(values.begin(), mid, values.end());
  const double upper = *mid;
  if (n % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), mid);
  return lower + (upper - lower) / 2;
}

double ToleranceFor(const MetricSpec& spec, const BaselinePolicy& policy) {
  if (spec.worse == Worse::kLower) return policy.throughput_tolerance;
  return spec.is_latency_tail ? policy.tail_tolerance : policy.latency_tolerance;
}

double SpreadFloorFor(const MetricSpec& spec, const BaselinePolicy& policy) {
  if (spec.worse == Worse::kLower) return policy.throughput_spread_floor;
  return spec.is_latency_tail ? policy.tail_spread_floor : policy.latency_spread_floor;
}

double RobustSpread(std::vector<double> values) {
  const double median = Median(values);
  for (double& x : values) x = std::abs(x - median);
  return kMadToSigma * Median(values);
}

namespace {

const DirectionStats& Direction(const ProbeResult& result, std::string_view op) {
  return op == "write" ? result.write : result.read;
}

// The run carries the quantile: enough I/Os for it under the sample rule.
bool CarriesQuantile(const MetricSpec& spec, const DirectionStats& stats,
                     const BaselinePolicy& policy) {
  return stats.ios >= MinSamplesForQuantile(spec.quantile, policy.quantile_samples);
}

// The learned figures of a quantile metric from the runs that carry it
// (nullopt when fewer than half of them do), with the pooled interval.
std::optional<MetricBaseline> LearnQuantile(const MetricSpec& spec, const std::string& op,
                                            std::span<const RunRecord> runs,
                                            const BaselinePolicy& policy) {
  std::vector<std::vector<MetricSample>> carried;
  LatencyHistogram pooled;
  for (const RunRecord& run : runs) {
    const DirectionStats& stats = Direction(run.result, op);
    if (!CarriesQuantile(spec, stats, policy)) continue;
    for (const MetricSample& sample : run.metrics) {
      if (sample.op == op && sample.metric == spec.name) carried.push_back({sample});
    }
    if (const LatencyHistogram* h = HistogramOf(stats, spec.source)) pooled.Merge(*h);
  }
  if (carried.empty() || 2 * carried.size() < runs.size()) return std::nullopt;
  MetricBaseline out = LearnMetrics(carried).front();
  out.samples = pooled.Count();
  if (policy.quantile_confidence > 0 && pooled.Count() > 0) {
    const QuantileInterval interval =
        QuantileConfidenceInterval(pooled, spec.quantile, policy.quantile_confidence);
    out.interval_low = interval.low_seconds;
    out.interval_high = interval.high_seconds;
  }
  return out;
}

// The note and verdict of the quantile rules for a quantile metric that is
// beyond its threshold or lacks samples; false: not judged.
bool ApplyQuantileRules(const MetricSpec& spec, const MetricBaseline& base,
                        const DirectionStats& stats, const BaselinePolicy& policy,
                        MetricVerdict& v) {
  const uint64_t needed = MinSamplesForQuantile(spec.quantile, policy.quantile_samples);
  if (stats.ios < needed) {
    v.judged = false;
    v.bad = false;
    v.note = fmt::format("{} needs {} I/Os, the run had {}", spec.name, needed, stats.ios);
    return false;
  }
  if (!v.bad || policy.quantile_confidence <= 0) return true;
  const LatencyHistogram* histogram = HistogramOf(stats, spec.source);
  if (histogram == nullptr || histogram->Count() == 0) return true;
  const QuantileInterval run =
      QuantileConfidenceInterval(*histogram, spec.quantile, policy.quantile_confidence);
  // Without the baseline's own interval (imported, or older), its median
  // stands for it.
  const double base_high = base.samples > 0 ? base.interval_high : base.median;
  if (run.low_seconds <= base_high) {
    v.bad = false;
    v.note =
        fmt::format("within the {:g} % intervals ({:.3g}–{:.3g} s against up to {:.3g} s)",
                    100 * policy.quantile_confidence, run.low_seconds, run.high_seconds, base_high);
  }
  return true;
}

}  // namespace

bool BaselinePolicy::Judges(const MetricSpec& spec) const {
  if (metrics.empty()) return spec.judged_by_default;
  return std::ranges::find(metrics, spec.name) != metrics.end();
}

const MetricBaseline* Baseline::Find(std::string_view op, std::string_view metric) const {
  for (const MetricBaseline& m : metrics) {
    if (m.op == op && m.metric == metric) return &m;
  }
  return nullptr;
}

std::vector<MetricBaseline> LearnMetrics(std::span<const std::vector<MetricSample>> runs) {
  // Keys in order of first appearance, so the result follows ExtractMetrics'
  // order (read before write, BaselineMetrics() order within each) and reads
  // the same in `baseline show` and the store every time.
  std::vector<std::pair<std::string, std::string>> keys;
  std::map<std::pair<std::string, std::string>, std::vector<double>> values;
  for (const std::vector<MetricSample>& run : runs) {
    for (const MetricSample& sample : run) {
      auto key = std::make_pair(sample.op, sample.metric);
      auto [it, inserted] = values.try_emplace(key);
      if (inserted) keys.push_back(std::move(key));
      it->second.push_back(sample.value);
    }
  }

  std::vector<MetricBaseline> out;
  out.reserve(keys.size());
  for (const auto& key : keys) {
    std::vector<double>& v = values.at(key);
    const double median = Median(v);
    for (double& x : v) x = std::abs(x - median);
    const double mad = Median(v);
    out.push_back(MetricBaseline{key.first, key.second, median, kMadToSigma * mad});
  }
  return out;
}

Baseline LearnBaseline(std::span<const RunRecord> runs, int64_t created_unix_ms,
                       const BaselinePolicy& policy) {
  Baseline baseline;
  if (runs.empty()) return baseline;
  const RunRecord& newest = *std::ranges::max_element(runs, {}, &RunRecord::start_unix_ms);
  baseline.job = newest.job;
  baseline.fingerprint = newest.fingerprint;
  baseline.device = newest.device;
  baseline.model = newest.model;
  baseline.created_unix_ms = created_unix_ms;
  std::vector<std::vector<MetricSample>> metrics;
  for (const RunRecord& run : runs) {
    baseline.run_ids.push_back(run.id);
    metrics.push_back(run.metrics);
  }
  for (MetricBaseline& learned : LearnMetrics(metrics)) {
    const MetricSpec* spec = FindMetric(learned.metric);
    if (spec == nullptr) {
      baseline.metrics.push_back(std::move(learned));
      continue;
    }
    if (spec->quantile > 0) {
      std::optional<MetricBaseline> quantile = LearnQuantile(*spec, learned.op, runs, policy);
      if (!quantile) continue;
      learned = std::move(*quantile);
    }
    learned.spread = std::max(learned.spread, SpreadFloorFor(*spec, policy) * learned.median);
    baseline.metrics.push_back(std::move(learned));
  }
  return baseline;
}

std::optional<std::vector<size_t>> PickLearningRuns(std::span<const int64_t> start_unix_ms,
                                                    const BaselinePolicy& policy) {
  const size_t want = std::max<size_t>(policy.runs, 1);
  const size_t n = start_unix_ms.size();
  if (n < want || start_unix_ms.back() - start_unix_ms.front() < policy.min_age_ms) {
    return std::nullopt;
  }
  std::vector<size_t> picked;
  picked.reserve(want);
  for (size_t i = 0; i < want; ++i) {
    // Evenly spread over [0, n − 1], both ends included; one run: the newest.
    picked.push_back(want == 1 ? n - 1 : (i * (n - 1) + (want - 1) / 2) / (want - 1));
  }
  return picked;
}

std::vector<MetricVerdict> Compare(const Baseline& baseline, std::span<const MetricSample> run,
                                   const BaselinePolicy& policy, const ProbeResult* result) {
  std::vector<MetricVerdict> out;
  for (const MetricSample& sample : run) {
    const MetricSpec* spec = FindMetric(sample.metric);
    const MetricBaseline* base = baseline.Find(sample.op, sample.metric);
    if (spec == nullptr || base == nullptr || !policy.Judges(*spec)) continue;

    MetricVerdict v;
    v.op = sample.op;
    v.metric = sample.metric;
    v.value = sample.value;
    v.baseline = base->median;
    v.ratio = base->median != 0 ? sample.value / base->median : 0;
    v.threshold =
        std::max(ToleranceFor(*spec, policy) * base->median, policy.spread_factor * base->spread);
    // How far the run is on the worse side; negative for an improvement,
    // which is never bad however large.
    const double worse_by =
        spec->worse == Worse::kLower ? base->median - sample.value : sample.value - base->median;
    // A zero median gives the tolerance nothing to scale, and any non-zero
    // value would be "infinitely" worse: no judgement rather than a false one.
    v.bad = base->median > 0 && worse_by > v.threshold;
    if (result != nullptr && spec->quantile > 0) {
      ApplyQuantileRules(*spec, *base, Direction(*result, sample.op), policy, v);
    }
    out.push_back(std::move(v));
  }
  return out;
}

double RelativeShift(const MetricVerdict& verdict) {
  if (verdict.baseline <= 0) return RegressionTracker::kNoShift;
  const MetricSpec* spec = FindMetric(verdict.metric);
  const double ratio = verdict.value / verdict.baseline;
  const double shift = spec != nullptr && spec->worse == Worse::kLower ? 1 - ratio : ratio - 1;
  return std::max(shift, 0.0);
}

namespace {

// A good verdict says the shift is gone only if it could have seen it: its
// allowed distance and its own shift both below it; or, for a clean run
// against the clean baseline (`at_own_level`: a median no neighbour's load
// moved), its own shift below half of it, whatever its spread allows
// (RegressionTracker).
bool Informative(const MetricVerdict& good, double shift, bool at_own_level) {
  const double allowed = good.baseline > 0 ? good.threshold / good.baseline : 0;
  const double own = RelativeShift(good);
  return own < shift && (allowed < shift || (at_own_level && own < shift / 2));
}

}  // namespace

std::vector<RegressionChange> RegressionTracker::Update(std::span<const MetricVerdict> verdicts,
                                                        int64_t start_ms, int64_t end_ms,
                                                        bool at_own_level) {
  // K = 0 would raise without a single bad run; treat it as 1.
  const uint32_t k = std::max<uint32_t>(hysteresis_, 1);
  std::vector<RegressionChange> changes;
  for (const MetricVerdict& verdict : verdicts) {
    if (!verdict.judged) continue;
    Streaks& s = states_[std::make_pair(verdict.op, verdict.metric)];
    if (verdict.bad) {
      const bool opens = !s.regressed && s.bad_streak == 0;
      s.shift = opens ? RelativeShift(verdict) : std::min(s.shift, RelativeShift(verdict));
      if (s.bad_streak == 0) s.bad_since_ms = start_ms;
      ++s.bad_streak;
      s.good_streak = 0;
    } else {
      if (!Informative(verdict, s.shift, at_own_level)) continue;
      ++s.good_streak;
      s.bad_streak = 0;
      s.bad_since_ms = 0;
      if (!s.regressed) s.shift = kNoShift;
    }
    const bool lasted = end_ms - s.bad_since_ms >= min_bad_span_ms_;
    const bool flip = s.regressed ? s.good_streak >= k : s.bad_streak >= k && lasted;
    if (!flip) continue;
    const int64_t was_raised_ms = s.raised_ms;
    s.regressed = !s.regressed;
    s.since_ms = s.regressed ? s.bad_since_ms : 0;
    s.bad_streak = s.good_streak = 0;
    s.bad_since_ms = 0;
    s.raised_ms = s.regressed ? end_ms : 0;
    if (!s.regressed) s.shift = kNoShift;
    changes.push_back(
        RegressionChange{verdict.op, verdict.metric, s.regressed, verdict, {}, false, s.since_ms});
    const MetricSpec* spec = FindMetric(verdict.metric);
    if (!s.regressed && spec != nullptr && spec->quantile == 0) {
      ClearQuantilesWith(RegressionChange(changes.back()), was_raised_ms, verdicts, changes);
    }
  }
  return changes;
}

void RegressionTracker::ClearQuantilesWith(const RegressionChange& change, int64_t raised_ms,
                                           std::span<const MetricVerdict> verdicts,
                                           std::vector<RegressionChange>& changes) {
  for (auto& [key, s] : states_) {
    const auto& [op, metric] = key;
    const MetricSpec* spec = FindMetric(metric);
    if (op != change.op || !s.regressed || spec == nullptr || spec->quantile == 0 ||
        s.raised_ms < raised_ms) {
      continue;
    }
    const bool bad_now = std::ranges::any_of(verdicts, [&](const MetricVerdict& v) {
      return v.judged && v.bad && v.op == op && v.metric == metric;
    });
    if (bad_now) continue;
    s = Streaks{};
    changes.push_back(RegressionChange{op, metric, false, change.verdict, change.metric});
  }
}

bool RegressionTracker::AnyRegressed() const {
  return std::ranges::any_of(states_, [](const auto& entry) { return entry.second.regressed; });
}

bool RegressionTracker::AnyPending() const {
  return std::ranges::any_of(states_, [](const auto& entry) {
    return !entry.second.regressed && entry.second.bad_streak > 0;
  });
}

int64_t RegressionTracker::RegressedSinceMs(std::string_view op, std::string_view metric) const {
  const auto it = states_.find(std::make_pair(std::string(op), std::string(metric)));
  return it != states_.end() && it->second.regressed ? it->second.since_ms : 0;
}

bool RegressionTracker::Regressed(std::string_view op, std::string_view metric) const {
  const auto it = states_.find(std::make_pair(std::string(op), std::string(metric)));
  return it != states_.end() && it->second.regressed;
}

std::vector<RegressionTracker::Entry> RegressionTracker::Entries() const {
  std::vector<Entry> out;
  out.reserve(states_.size());
  for (const auto& [key, s] : states_) {
    out.push_back({key.first, key.second, s});
  }
  return out;
}

void RegressionTracker::Restore(std::span<const Entry> entries) {
  states_.clear();
  for (const Entry& e : entries) {
    states_[std::make_pair(e.op, e.metric)] = e.streaks;
  }
}

}  // namespace iowatch::probes
