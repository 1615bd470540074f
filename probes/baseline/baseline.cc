#include "probes/baseline/baseline.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace iowatch::probes {
namespace {

// MAD × 1.4826 estimates the standard deviation of normal data (1.4826 ≈
// 1 / Φ⁻¹(3/4)), so spread_factor reads as "k sigmas" while one wild run in
// the learning set cannot inflate it the way it would a standard deviation.
constexpr double kMadToSigma = 1.4826;

// Median of `values` (reordered); the mean of the two middle values for an
// even count, so that two runs give their midpoint rather than either one.
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

}  // namespace

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

Baseline LearnBaseline(std::span<const RunRecord> runs, int64_t created_unix_ms) {
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
  baseline.metrics = LearnMetrics(metrics);
  return baseline;
}

std::vector<MetricVerdict> Compare(const Baseline& baseline, std::span<const MetricSample> run,
                                   const BaselinePolicy& policy) {
  std::vector<MetricVerdict> out;
  for (const MetricSample& sample : run) {
    const MetricSpec* spec = FindMetric(sample.metric);
    const MetricBaseline* base = baseline.Find(sample.op, sample.metric);
    if (spec == nullptr || base == nullptr) continue;

    MetricVerdict v{
        .op = sample.op, .metric = sample.metric, .value = sample.value, .baseline = base->median};
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
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<RegressionChange> RegressionTracker::Update(std::span<const MetricVerdict> verdicts) {
  // K = 0 would raise without a single bad run; treat it as 1.
  const uint32_t k = std::max<uint32_t>(hysteresis_, 1);
  std::vector<RegressionChange> changes;
  for (const MetricVerdict& verdict : verdicts) {
    State& s = states_[std::make_pair(verdict.op, verdict.metric)];
    if (verdict.bad) {
      ++s.bad_streak;
      s.good_streak = 0;
    } else {
      ++s.good_streak;
      s.bad_streak = 0;
    }
    const bool flip = s.regressed ? s.good_streak >= k : s.bad_streak >= k;
    if (!flip) continue;
    s.regressed = !s.regressed;
    s.bad_streak = s.good_streak = 0;
    changes.push_back(RegressionChange{verdict.op, verdict.metric, s.regressed, verdict});
  }
  return changes;
}

bool RegressionTracker::Regressed(std::string_view op, std::string_view metric) const {
  const auto it = states_.find(std::make_pair(std::string(op), std::string(metric)));
  return it != states_.end() && it->second.regressed;
}

}  // namespace iowatch::probes
