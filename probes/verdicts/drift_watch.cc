#include "probes/verdicts/drift_watch.h"

#include <algorithm>
#include <cmath>

namespace iowatch::probes {
namespace {

// +1 when a larger value is worse (latency), −1 when smaller is (throughput).
double Orientation(const MetricSpec& spec) { return spec.worse == Worse::kHigher ? 1 : -1; }

// The mean and standard deviation (at least `floor`) of `n` values summing
// to `sum`, their squares to `sum_sq`; a σ of 1 below two values.
std::pair<double, double> MeanAndSigma(uint64_t n, double sum, double sum_sq, double floor) {
  if (n == 0) return {0, 1};
  const auto count = static_cast<double>(n);
  const double mean = sum / count;
  if (n < 2) return {mean, 1};
  const double variance = std::max(0.0, sum_sq / count - mean * mean) * count / (count - 1);
  return {mean, std::max(floor, std::sqrt(variance))};
}

// The smoothed log-ratio a drift must reach to be raised.
double MaterialLevel(const MetricSpec& spec, const BaselinePolicy& policy) {
  const double share = DriftWatch::kMaterialShare * ToleranceFor(spec, policy);
  return spec.worse == Worse::kHigher ? std::log1p(share) : -std::log1p(-share);
}

}  // namespace

bool DriftWatch::ChooseReference(std::span<const int64_t> ids, std::span<const int64_t> starts,
                                 int64_t after_ms) {
  if (starts.empty() || starts.back() - starts.front() < kReferenceSpanMs) return false;
  // The first day, or as much more as makes kMinReferenceRuns (a run left
  // out, a slower schedule).
  std::vector<size_t> day;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (starts[i] - starts.front() > kReferenceSpanMs && day.size() >= kMinReferenceRuns) break;
    day.push_back(i);
  }
  if (day.size() < kMinReferenceRuns) return false;
  reference_.clear();
  const size_t keep = std::min(day.size(), kMaxReferenceRuns);
  for (size_t k = 0; k < keep; ++k) reference_.push_back(ids[day[k * day.size() / keep]]);
  reference_after_ms_ = after_ms;
  calibrate_until_ms_ = starts[day.back()] + kCalibrationMs;
  points_.clear();
  return true;
}

void DriftWatch::Restart(int64_t after_ms) {
  reference_.clear();
  evidence_.clear();
  points_.clear();
  reference_after_ms_ = after_ms;
  calibrate_until_ms_ = 0;
}

std::vector<DriftWatch::Change> DriftWatch::Update(const Baseline& predicted,
                                                   std::span<const MetricSample> metrics,
                                                   const BaselinePolicy& policy, int64_t start_ms,
                                                   int64_t end_ms, bool clean) {
  std::vector<Change> changes;
  for (const MetricBaseline& m : predicted.metrics) {
    const MetricSpec* spec = FindMetric(m.metric);
    if (spec == nullptr || spec->quantile > 0 || m.median <= 0 || m.spread <= 0) continue;
    const auto sample = std::ranges::find_if(
        metrics, [&](const MetricSample& s) { return s.op == m.op && s.metric == m.metric; });
    if (sample == metrics.end() || !(sample->value > 0) || !std::isfinite(sample->value)) continue;
    const double sigma = std::log1p(m.spread / m.median);
    const double u = Orientation(*spec) * std::log(sample->value / m.median) / sigma;
    Evidence& e = evidence_[{m.op, m.metric}];
    if (Calibrating(e, start_ms)) {
      Calibrate(e, u, sigma, clean);
      continue;
    }
    if (std::optional<Change> change =
            Judge(e, u, sigma, MaterialLevel(*spec, policy), start_ms, end_ms, clean)) {
      change->op = m.op;
      change->metric = m.metric;
      change->ratio = *Ratio(m.op, m.metric);
      changes.push_back(std::move(*change));
    }
  }
  return changes;
}

bool DriftWatch::Calibrating(const Evidence& e, int64_t start_ms) const {
  return start_ms < calibrate_until_ms_ || e.calibration_runs < kMinCalibrationRuns;
}

void DriftWatch::Calibrate(Evidence& e, double u, double sigma, bool clean) {
  const double clipped = std::clamp(u, -kCalibrationClip, kCalibrationClip);
  ++e.calibration_runs;
  e.calibration_sum += clipped;
  e.calibration_sum_sq += clipped * clipped;
  if (!clean) {
    ++e.contended_runs;
    e.contended_sum += clipped;
    e.contended_sum_sq += clipped * clipped;
  }
  Follow(e, (u - CalibratedMean(e)) * sigma);
}

double DriftWatch::CalibratedMean(const Evidence& e) {
  return MeanAndSigma(e.calibration_runs, e.calibration_sum, e.calibration_sum_sq,
                      kMinCalibratedSigma)
      .first;
}

double DriftWatch::CalibratedSigma(const Evidence& e) {
  return MeanAndSigma(e.calibration_runs, e.calibration_sum, e.calibration_sum_sq,
                      kMinCalibratedSigma)
      .second;
}

std::optional<std::pair<double, double>> DriftWatch::StepScale(const Evidence& e, bool clean) {
  const double sigma = CalibratedSigma(e);
  if (clean) return std::make_pair(CalibratedMean(e), sigma);
  if (e.contended_runs < kMinContendedCalibrationRuns) return std::nullopt;
  return MeanAndSigma(e.contended_runs, e.contended_sum, e.contended_sum_sq, sigma);
}

void DriftWatch::Follow(Evidence& e, double shift) {
  e.level = e.runs == 0 ? shift : e.level + kLevelWeight * (shift - e.level);
  ++e.runs;
}

bool DriftWatch::Stepped(Evidence& e, double u, std::pair<double, double> scale, double sigma,
                         double material, int64_t start_ms) {
  const auto [mean, spread] = scale;
  const double z = std::clamp((u - mean) / spread, -kStepClip, kStepClip);
  if (e.step == 0 && z > kStepSlack) e.step_since_ms = start_ms;
  e.step = std::max(0.0, e.step + z - kStepSlack);
  if (e.step == 0) {
    e.step_runs = 0;
    e.step_shift = 0;
    return false;
  }
  ++e.step_runs;
  e.step_shift += (u - mean) * sigma;
  return e.step >= kStepRaise && e.step_runs >= kStepRuns && e.step_shift / e.step_runs >= material;
}

std::optional<DriftWatch::Change> DriftWatch::Judge(Evidence& e, double u, double sigma,
                                                    double material, int64_t start_ms,
                                                    int64_t end_ms, bool clean) {
  const double mean = CalibratedMean(e);
  const double z = std::clamp((u - mean) / CalibratedSigma(e), -kClip, kClip);
  Follow(e, (u - mean) * sigma);
  if (e.worse == 0 && z > kSlack) e.since_ms = start_ms;
  e.worse = std::max(0.0, e.worse + z - kSlack);
  const std::optional<std::pair<double, double>> scale = StepScale(e, clean);
  const bool stepped = scale && Stepped(e, u, *scale, sigma, material, start_ms);
  const bool drifted = e.worse >= kRaise && e.level >= material;
  if (!e.raised && (drifted || stepped)) {
    if (!drifted) {
      // A step is its runs' level from its first run, not the slow average's.
      e.level = e.step_shift / e.step_runs;
      e.since_ms = e.step_since_ms;
    }
    e.raised = true;
    e.raised_ms = end_ms;
    e.recovery = 0;
    return Change{.op = {}, .metric = {}, .raised = true, .ratio = 0, .since_ms = e.since_ms};
  }
  if (!e.raised) return std::nullopt;
  // Runs back within k of the commissioning level add up to a clear as a
  // shift did to the raise.
  e.recovery = std::max(0.0, e.recovery + kSlack - z);
  if (e.recovery < kRaise && e.level >= material / 2) return std::nullopt;
  e.raised = false;
  e.worse = 0;
  e.recovery = 0;
  e.step = 0;
  e.step_runs = 0;
  e.step_shift = 0;
  return Change{.op = {}, .metric = {}, .raised = false, .ratio = 0, .since_ms = e.since_ms};
}

bool DriftWatch::Raised(std::string_view op, std::string_view metric) const {
  const auto it = evidence_.find(std::make_pair(std::string(op), std::string(metric)));
  return it != evidence_.end() && it->second.raised;
}

bool DriftWatch::AnyRaised() const {
  return std::ranges::any_of(evidence_, [](const auto& e) { return e.second.raised; });
}

std::optional<double> DriftWatch::Scatter(std::string_view op, std::string_view metric,
                                          int64_t start_ms, bool clean) const {
  const auto it = evidence_.find(std::make_pair(std::string(op), std::string(metric)));
  if (it == evidence_.end() || Calibrating(it->second, start_ms)) return std::nullopt;
  const std::optional<std::pair<double, double>> scale = StepScale(it->second, clean);
  if (!scale) return std::nullopt;
  return scale->second;
}

std::optional<double> DriftWatch::Ratio(std::string_view op, std::string_view metric) const {
  const auto it = evidence_.find(std::make_pair(std::string(op), std::string(metric)));
  const MetricSpec* spec = FindMetric(metric);
  if (it == evidence_.end() || it->second.runs == 0 || spec == nullptr) return std::nullopt;
  return std::exp(Orientation(*spec) * it->second.level);
}

void DriftWatch::Restore(
    std::vector<int64_t> reference, int64_t after_ms, int64_t calibrate_until_ms,
    std::map<std::pair<std::string, std::string>, Evidence, std::less<>> evidence) {
  reference_ = std::move(reference);
  reference_after_ms_ = after_ms;
  calibrate_until_ms_ = calibrate_until_ms;
  evidence_ = std::move(evidence);
  points_.clear();
}

}  // namespace iowatch::probes
