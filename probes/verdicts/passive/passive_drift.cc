#include "probes/verdicts/passive/passive_drift.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "probes/verdicts/baseline.h"

namespace iowatch::probes {
namespace {

// A reference point as a window a model predicts at: its loads.
PassiveWindow LoadOf(const PassivePoint& p) {
  PassiveWindow w;
  w.start_ms = p.start_ms;
  w.end_ms = p.end_ms;
  w.rate = p.rate;
  w.other_bytes_rate = p.other_bytes_rate;
  w.mean_bytes = p.mean_bytes;
  w.steal = p.steal;
  w.requests = p.requests;
  return w;
}

}  // namespace

bool PassiveDrift::Choose(const std::deque<PassivePoint>& learned, const PassivePolicy& policy) {
  if (reference_ || learned.empty()) return false;
  const int64_t day_end_ms = learned.front().start_ms + kReferenceSpanMs;
  if (learned.back().end_ms < day_end_ms) return false;
  const auto day_end = std::ranges::find_if(
      learned, [&](const PassivePoint& p) { return p.start_ms >= day_end_ms; });
  const auto count = static_cast<size_t>(std::distance(learned.begin(), day_end));
  // Thinned evenly: a day of minutes says no more of the load's shape than
  // every sixth of them, and the store keeps each.
  std::vector<PassivePoint> points;
  const size_t keep = std::min(count, kMaxReferencePoints);
  points.reserve(keep);
  for (size_t i = 0; i < keep; ++i) points.push_back(learned[i * count / keep]);
  std::optional<PassiveModel> model = PassiveModel::Learn(points, policy);
  if (!model) return false;
  reference_ = model;
  points_ = std::move(points);
  state_ = PassiveDriftState{};
  state_.calibrate_until_ms = reference_->LastMs() + kCalibrationMs;
  return true;
}

std::optional<double> PassiveDrift::LevelOf(const PassiveModel& refitted,
                                            const PassivePolicy& policy) const {
  std::vector<double> ratios;
  ratios.reserve(points_.size());
  for (const PassivePoint& p : points_) {
    const PassiveWindow load = LoadOf(p);
    const PassivePrediction now = refitted.At(load, policy);
    const PassivePrediction then = reference_->At(load, policy);
    if (!now.outside.empty() || !then.outside.empty()) continue;
    ratios.push_back(std::log(now.mean_seconds / then.mean_seconds));
  }
  if (ratios.empty() || 2 * ratios.size() < points_.size()) return std::nullopt;
  return Median(ratios);
}

std::optional<PassiveDrift::Change> PassiveDrift::Compare(const PassiveModel& refitted,
                                                          int64_t now_ms,
                                                          const PassivePolicy& policy) {
  if (!reference_) return std::nullopt;
  const std::optional<double> level = LevelOf(refitted, policy);
  if (!level || !std::isfinite(*level)) return std::nullopt;
  PassiveDriftState& s = state_;
  if (now_ms < s.calibrate_until_ms || s.calibration_fits < kMinCalibrationFits) {
    ++s.calibration_fits;
    s.calibration_sum += *level;
    return std::nullopt;
  }
  s.level = *level - s.calibration_sum / static_cast<double>(s.calibration_fits);
  const bool beyond = s.raised ? *s.level < kMaterial / 2 : *s.level >= kMaterial;
  if (!beyond) {
    s.streak = 0;
    return std::nullopt;
  }
  if (s.streak++ == 0 && !s.raised) s.since_ms = now_ms;
  if (s.streak < kHold) return std::nullopt;
  s.raised = !s.raised;
  s.streak = 0;
  return Change{.raised = s.raised, .ratio = std::exp(*s.level), .since_ms = s.since_ms};
}

std::optional<double> PassiveDrift::Ratio() const {
  if (!state_.level) return std::nullopt;
  return std::exp(*state_.level);
}

void PassiveDrift::Restore(std::span<const PassivePoint> reference, const PassiveDriftState& state,
                           const PassivePolicy& policy) {
  reference_.reset();
  points_.assign(reference.begin(), reference.end());
  if (!points_.empty()) reference_ = PassiveModel::Learn(points_, policy);
  if (!reference_) {
    points_.clear();
    state_ = PassiveDriftState{};
    return;
  }
  state_ = state;
}

}  // namespace iowatch::probes
