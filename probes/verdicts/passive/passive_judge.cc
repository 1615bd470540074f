#include "probes/verdicts/passive/passive_judge.h"

#include <algorithm>
#include <functional>
#include <span>
#include <utility>

namespace iowatch::probes {
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

void PassiveJudge::Learn(Series& series, const PassivePoint& point, std::string_view name,
                         std::vector<PassivePoint>& learned) {
  series.learned.push_back(point);
  learned.push_back(point);
  while (series.learned.size() > policy_.max_windows) series.learned.pop_front();
  ++series.since_fit;
  if (series.model && series.since_fit < policy_.refit_every) return;
  Fit(series, name);
}

void PassiveJudge::Fit(Series& series, std::string_view name) {
  const std::vector<PassivePoint> points(series.learned.begin(), series.learned.end());
  std::optional<PassiveModel> model = PassiveModel::Learn(points, policy_.model);
  if (!model) return;
  // The first fits of a host's series fall in the same minute (they start
  // learning together); each refits at its own offset after, so that a
  // thousand disks' hourly refits (0.4 ms each) spread over the hour.
  const bool first = !series.model;
  series.model = model;
  series.drift.Choose(series.learned, policy_.model);
  if (std::optional<PassiveDrift::Change> change =
          series.drift.Compare(*model, series.learned.back().end_ms, policy_.model)) {
    series.drift_change = change;
  }
  series.since_fit =
      first ? std::hash<std::string_view>{}(name) % std::max<size_t>(policy_.refit_every, 1) : 0;
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
  // A regressed series clears on minutes below half the bound's margin: a
  // step just above the bound has one minute in five under it, and three in
  // a row every few hours would clear it and let it be learned.
  if (!v.bad && series.tracker.AnyRegressed() && v.ratio > 1 + (v.bound_ratio - 1) / 2) return v;
  bool open = !series.tracker.AnyRegressed() && series.tracker.AnyPending();
  if (v.bad && open && series.streak_windows >= policy_.max_streak_windows) {
    series.tracker.Reset();  // too far from the streak's first: this one starts another
    open = false;
  }
  MetricVerdict m;
  m.op = window.op;
  m.metric = std::string(kPassiveMetric);
  m.value = window.mean_seconds;
  m.baseline = p.mean_seconds;
  m.ratio = v.ratio;
  m.threshold = (p.bound_ratio - 1) * p.mean_seconds;
  m.bad = v.bad;
  // While nothing is raised, a good minute breaks a streak only where it
  // could have seen its shift (its bound narrower): a quiet minute of a
  // bursty disk, whose bound is twice the busy ones', cannot refute them.
  // Once raised, a minute at the disk's own level counts towards the clear
  // however wide its bound (those above half its margin were kept out above).
  const std::vector<RegressionChange> changes =
      series.tracker.Update(std::span<const MetricVerdict>(&m, 1), window.start_ms, window.end_ms,
                            series.tracker.AnyRegressed());
  if (!changes.empty()) v.change = changes.front();
  const bool still_open = !series.tracker.AnyRegressed() && series.tracker.AnyPending();
  series.streak_windows = !still_open ? 0 : open ? series.streak_windows + 1 : 1;
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
  const bool regressed_before = series.Regressed();
  const bool chosen_before = series.drift.Chosen();
  v = JudgeLearnable(series, window);
  FeedDrift(series, window, regressed_before, v);
  if (!chosen_before && series.drift.Chosen()) v.reference = series.drift.ReferencePoints();
  return v;
}

void PassiveJudge::FeedDrift(Series& series, const PassiveWindow& window, bool regressed_before,
                             PassiveVerdict& v) {
  const std::optional<PassiveDrift::Change> drift = std::exchange(series.drift_change, {});
  const bool regressed = series.Regressed();
  // The hysteresis' clear while the drift holds the series (or the reverse)
  // changes nothing to see.
  if (v.change && v.change->regressed != regressed) v.change.reset();
  if (v.change || !drift || regressed == regressed_before) return;
  RegressionChange change;
  change.op = window.op;
  change.metric = std::string(kPassiveMetric);
  change.regressed = regressed;
  change.verdict.op = window.op;
  change.verdict.metric = change.metric;
  change.verdict.ratio = drift->ratio;
  change.verdict.bad = regressed;
  change.drift = true;
  change.since_ms = drift->since_ms;
  v.change = std::move(change);
}

PassiveVerdict PassiveJudge::JudgeLearnable(Series& series, const PassiveWindow& window) {
  PassiveVerdict v;
  v.window = window;
  const std::string name = window.device + window.op + window.size;
  if (!series.model) {
    v.reason = PassiveReason::kLearning;
    if (!DiskSuspect()) Learn(series, PointOf(window), name, v.learned);
    return v;
  }
  const bool pending_before = series.tracker.AnyPending();
  v = Compare(series, window);
  if (v.reason == PassiveReason::kOutsideModel) {
    // Beyond the loads the model covered (a quiet night's model meeting the
    // day): learned while the disk is above suspicion, so that the next
    // refit covers it; never learned, a disk whose load grew would stay
    // unjudged for good.
    v.learned.clear();
    if (!DiskSuspect()) Learn(series, PointOf(window), name, v.learned);
    return v;
  }
  if (v.reason != PassiveReason::kJudged) return v;
  if (v.bad) {
    // Undecided: learned if the streak breaks, dropped if it raises.
    if (!series.tracker.AnyRegressed()) series.waiting.push_back(window);
    if (v.change && v.change->regressed) series.waiting.clear();
    return v;
  }
  if (pending_before && !series.tracker.AnyPending() && !series.tracker.AnyRegressed()) {
    for (const PassiveWindow& w : series.waiting) Learn(series, PointOf(w), name, v.learned);
  }
  if (!series.tracker.AnyPending()) series.waiting.clear();
  if (!DiskSuspect()) Learn(series, PointOf(window), name, v.learned);
  return v;
}

bool PassiveJudge::Regressed(const PassiveSeriesKey& key) const {
  const auto it = series_.find(key);
  return it != series_.end() && it->second.Regressed();
}

bool PassiveJudge::AnyRegressed() const {
  return std::ranges::any_of(series_, [](const auto& s) { return s.second.Regressed(); });
}

const PassiveModel* PassiveJudge::Model(const PassiveSeriesKey& key) const {
  const auto it = series_.find(key);
  return it == series_.end() || !it->second.model ? nullptr : &*it->second.model;
}

size_t PassiveJudge::LearnedWindows(const PassiveSeriesKey& key) const {
  const auto it = series_.find(key);
  return it == series_.end() ? 0 : it->second.learned.size();
}

int64_t PassiveJudge::RegressedSinceMs(const PassiveSeriesKey& key) const {
  const auto it = series_.find(key);
  if (it == series_.end()) return 0;
  const int64_t tracker = it->second.tracker.RegressedSinceMs(std::get<0>(key), kPassiveMetric);
  const int64_t drift = it->second.drift.SinceMs();
  if (tracker == 0 || drift == 0) return std::max(tracker, drift);
  return std::min(tracker, drift);
}

const PassiveDrift* PassiveJudge::Drift(const PassiveSeriesKey& key) const {
  const auto it = series_.find(key);
  return it == series_.end() ? nullptr : &it->second.drift;
}

std::vector<PassiveSeriesKey> PassiveJudge::Keys() const {
  std::vector<PassiveSeriesKey> keys;
  keys.reserve(series_.size());
  for (const auto& [key, series] : series_) keys.push_back(key);
  return keys;
}

PassiveSeriesState PassiveJudge::StateOf(const PassiveSeriesKey& key) const {
  const auto it = series_.find(key);
  if (it == series_.end()) return {};
  return {it->second.tracker.Entries(), it->second.waiting, it->second.since_fit,
          it->second.drift.State(), it->second.streak_windows};
}

void PassiveJudge::Restore(const PassiveSeriesKey& key, const PassiveSeriesState& state,
                           std::span<const PassivePoint> learned,
                           std::span<const PassivePoint> reference) {
  Series& series = SeriesOf(key);
  series.tracker.Restore(state.tracker);
  series.waiting = state.waiting;
  const size_t keep = std::min(learned.size(), policy_.max_windows);
  series.learned.assign(learned.end() - static_cast<std::ptrdiff_t>(keep), learned.end());
  series.model.reset();
  const auto& [op, size, source] = key;
  Fit(series, op + size);
  series.since_fit = state.since_fit;
  series.streak_windows = state.streak_windows;
  // After the fit, which would choose a reference the store never kept:
  // one not chosen before the restart is chosen at the next refit.
  series.drift.Restore(reference, state.drift, policy_.model);
  series.drift_change.reset();
}

}  // namespace iowatch::probes
