#include "probes/baseline/drift_watch.h"

#include <algorithm>
#include <cmath>

namespace iowatch::probes {
namespace {

// +1 when a larger value is worse (latency), −1 when smaller is (throughput).
double Orientation(const MetricSpec& spec) { return spec.worse == Worse::kHigher ? 1 : -1; }

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
  points_.clear();
  return true;
}

void DriftWatch::Restart(int64_t after_ms) {
  reference_.clear();
  evidence_.clear();
  points_.clear();
  reference_after_ms_ = after_ms;
}

std::vector<DriftWatch::Change> DriftWatch::Update(const Baseline& predicted,
                                                   std::span<const MetricSample> metrics,
                                                   const BaselinePolicy& policy, int64_t start_ms,
                                                   int64_t end_ms) {
  std::vector<Change> changes;
  for (const MetricBaseline& m : predicted.metrics) {
    const MetricSpec* spec = FindMetric(m.metric);
    if (spec == nullptr || spec->quantile > 0 || m.median <= 0 || m.spread <= 0) continue;
    const auto sample = std::ranges::find_if(
        metrics, [&](const MetricSample& s) { return s.op == m.op && s.metric == m.metric; });
    if (sample == metrics.end() || !(sample->value > 0) || !std::isfinite(sample->value)) continue;
    const double r = Orientation(*spec) * std::log(sample->value / m.median);
    const double sigma = std::log1p(m.spread / m.median);
    const double z = std::clamp(r / sigma, -kClip, kClip);
    Evidence& e = evidence_[{m.op, m.metric}];
    e.level = e.runs == 0 ? r : e.level + kLevelWeight * (r - e.level);
    ++e.runs;
    if (e.worse == 0 && z > kSlack) e.since_ms = start_ms;
    e.worse = std::max(0.0, e.worse + z - kSlack);
    const double material = MaterialLevel(*spec, policy);
    if (!e.raised && e.worse >= kRaise && e.level >= material) {
      e.raised = true;
      e.raised_ms = end_ms;
      e.recovery = 0;
      changes.push_back({m.op, m.metric, true, *Ratio(m.op, m.metric), e.since_ms});
    } else if (e.raised) {
      // Runs back within k of the reference add up to a clear as a shift did to the raise.
      e.recovery = std::max(0.0, e.recovery + kSlack - z);
      if (e.recovery >= kRaise || e.level < material / 2) {
        e.raised = false;
        e.worse = 0;
        e.recovery = 0;
        changes.push_back({m.op, m.metric, false, *Ratio(m.op, m.metric), e.since_ms});
      }
    }
  }
  return changes;
}

bool DriftWatch::Raised(std::string_view op, std::string_view metric) const {
  const auto it = evidence_.find(std::make_pair(std::string(op), std::string(metric)));
  return it != evidence_.end() && it->second.raised;
}

bool DriftWatch::AnyRaised() const {
  return std::ranges::any_of(evidence_, [](const auto& e) { return e.second.raised; });
}

std::optional<double> DriftWatch::Ratio(std::string_view op, std::string_view metric) const {
  const auto it = evidence_.find(std::make_pair(std::string(op), std::string(metric)));
  const MetricSpec* spec = FindMetric(metric);
  if (it == evidence_.end() || it->second.runs == 0 || spec == nullptr) return std::nullopt;
  return std::exp(Orientation(*spec) * it->second.level);
}

void DriftWatch::Restore(
    std::vector<int64_t> reference, int64_t after_ms,
    std::map<std::pair<std::string, std::string>, Evidence, std::less<>> evidence) {
  reference_ = std::move(reference);
  reference_after_ms_ = after_ms;
  evidence_ = std::move(evidence);
  points_.clear();
}

}  // namespace iowatch::probes
