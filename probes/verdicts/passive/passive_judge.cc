#include "probes/verdicts/passive/passive_judge.h"

#include <algorithm>
#include <functional>
#include <span>
#include <utility>

namespace iowatch::probes {
namespace {

// The tracker's metric: a mean latency (worse when higher).
constexpr std::string_view kMetric = "lat_mean_seconds";

}  // namespace

std::string_view ToString(PassiveReason reason) {
  switch (reason) {
    case PassiveReason::kJudged:
      return "judged";
    case PassiveReason::kTooFewRequests:
      return "too_few_requests";
    case PassiveReason::kProbe:
      return "probe";
    case PassiveReason::kCountersReset:
      return "counters_reset";
    case PassiveReason::kLearning:
      return "learning";
    case PassiveReason::kOutsideModel:
      return "outside_model";
  }
  return "judged";
}

PassiveJudge::Series& PassiveJudge::SeriesOf(const PassiveSeriesKey& key) {
  auto [it, added] = series_.try_emplace(key);
  if (added) it->second.tracker = RegressionTracker(policy_.hysteresis);
  return it->second;
}

bool PassiveJudge::DiskSuspect() const {
  return std::ranges::any_of(series_, [](const auto& s) {
    return s.second.tracker.AnyRegressed() || s.second.tracker.AnyPending();
  });
}

void PassiveJudge::Learn(Series& series, const PassiveWindow& window) {
  series.learned.push_back(PointOf(window));
  while (series.learned.size() > policy_.max_windows) series.learned.pop_front();
  ++series.since_fit;
  if (series.model && series.since_fit < policy_.refit_every) return;
  const std::vector<PassivePoint> points(series.learned.begin(), series.learned.end());
  std::optional<PassiveModel> model = PassiveModel::Learn(points, policy_.model);
  if (!model) return;
  // The first fits of a host's series fall in the same minute (they start
  // learning together); each refits at its own offset after, so that a
  // thousand disks' hourly refits (0.4 ms each) spread over the hour.
  const bool first = !series.model;
  series.model = model;
  series.since_fit = first ? std::hash<std::string>{}(window.device + window.op + window.size) %
                                 std::max<size_t>(policy_.refit_every, 1)
                           : 0;
}

PassiveVerdict PassiveJudge::Compare(Series& series, const PassiveWindow& window) {
  PassiveVerdict v;
  v.window = window;
  const PassivePrediction p = series.model->At(window, policy_.model);
  if (!p.outside.empty()) {
    v.reason = PassiveReason::kOutsideModel;
    v.why = p.outside;
    return v;
  }
  v.predicted_seconds = p.mean_seconds;
  v.ratio = window.mean_seconds / p.mean_seconds;
  v.bound_ratio = p.bound_ratio;
  v.bad = v.ratio > v.bound_ratio;
  MetricVerdict m;
  m.op = window.op;
  m.metric = std::string(kMetric);
  m.value = window.mean_seconds;
  m.baseline = p.mean_seconds;
  m.ratio = v.ratio;
  m.threshold = (p.bound_ratio - 1) * p.mean_seconds;
  m.bad = v.bad;
  const std::vector<RegressionChange> changes = series.tracker.Update(
      std::span<const MetricVerdict>(&m, 1), window.start_ms, window.end_ms, true);
  if (!changes.empty()) v.change = changes.front();
  return v;
}

PassiveVerdict PassiveJudge::Judge(const PassiveWindow& window) {
  Series& series = SeriesOf({window.op, window.size, window.source});
  PassiveVerdict v;
  v.window = window;
  if (window.counters_reset) {
    v.reason = PassiveReason::kCountersReset;
    return v;
  }
  if (window.probe) {
    v.reason = PassiveReason::kProbe;
    return v;
  }
  if (!Learnable(window, policy_.model)) {
    v.reason = PassiveReason::kTooFewRequests;
    return v;
  }
  if (!series.model) {
    v.reason = PassiveReason::kLearning;
    if (!DiskSuspect()) Learn(series, window);
    return v;
  }
  const bool pending_before = series.tracker.AnyPending();
  v = Compare(series, window);
  if (v.reason != PassiveReason::kJudged) return v;
  if (v.bad) {
    // Undecided: learned if the streak breaks, dropped if it raises.
    if (!series.tracker.AnyRegressed()) series.waiting.push_back(window);
    if (v.change && v.change->regressed) series.waiting.clear();
    return v;
  }
  if (pending_before && !series.tracker.AnyPending() && !series.tracker.AnyRegressed()) {
    for (const PassiveWindow& w : series.waiting) Learn(series, w);
  }
  if (!series.tracker.AnyPending()) series.waiting.clear();
  if (!DiskSuspect()) Learn(series, window);
  return v;
}

bool PassiveJudge::Regressed(const PassiveSeriesKey& key) const {
  const auto it = series_.find(key);
  return it != series_.end() && it->second.tracker.AnyRegressed();
}

bool PassiveJudge::AnyRegressed() const {
  return std::ranges::any_of(series_,
                             [](const auto& s) { return s.second.tracker.AnyRegressed(); });
}

const PassiveModel* PassiveJudge::Model(const PassiveSeriesKey& key) const {
  const auto it = series_.find(key);
  return it == series_.end() || !it->second.model ? nullptr : &*it->second.model;
}

size_t PassiveJudge::LearnedWindows(const PassiveSeriesKey& key) const {
  const auto it = series_.find(key);
  return it == series_.end() ? 0 : it->second.learned.size();
}

}  // namespace iowatch::probes
