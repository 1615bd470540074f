// DriftWatch: evidence that adds up. A disk that loses a few percent a day
// (fail-slow) never makes one run bad enough for the per-run judge, and a
// baseline that keeps learning follows it down. So each series also keeps a
// reference of its own first day (its commissioning: the load model fitted
// on the learnable runs of the first 24 hours, frozen), and every later run
// inside the stresses that day covered is compared with the reference's
// prediction at the run's stress. Per (op, metric) judged that is not a
// quantile, a one-sided CUSUM on the runs' standardised log-ratios
// (z = log(value / prediction) / σ, oriented worse-positive, clipped at
// ±kClip so one stalled run weighs at most kClip − kSlack) raises when the
// evidence of a shift reaches kRaise (and the shift is material: kMaterialShare), and a mirrored
// CUSUM (runs within k of the reference adding up) clears it when the runs are back. σ is the
// reference's own spread at the run's stress (its residuals' robust spread, at least the policy's
// floor).
//
// Why these numbers: k = kSlack σ is half the smallest shift worth finding
// fast (0.5 σ, 5 % of IOPS at the recorded 10 % run-to-run noise); h = kRaise
// puts a healthy series' average run length between false raises above a
// million runs for Gaussian residuals (Siegmund's approximation), 30 years of
// the bundled 15-minute schedule, so a 1,000-host fleet with 4 disks each and
// two independent metrics per disk sees well under one a day.
//
// A pinned baseline newer than the reference (an operator's capture or
// import: the new normal) starts the reference again.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "probes/baseline/baseline.h"
#include "probes/baseline/load_model.h"

namespace iowatch::probes {

class DriftWatch {
 public:
  static constexpr double kSlack = 0.25;  // k, in σ
  static constexpr double kRaise = 24;    // h, in σ
  static constexpr double kClip = 3;
  // ... and only once the smoothed level is this share of the metric's
  // tolerance worse than the reference (12 % of IOPS, 30 % of the mean at
  // the default tolerances); cleared below half of it. On the simulated fleet
  // (100 hosts x 30 days) the evidence alone raised healthy disks whose level
  // sat 1-9 % off their first day's reference: the load model fitted on one
  // day predicts other days' stresses only that well.
  static constexpr double kMaterialShare = 0.6;
  // The reference: the learnable runs of the series' first day (or its first
  // kMinReferenceRuns, when the day had fewer), thinned evenly to
  // kMaxReferenceRuns.
  static constexpr int64_t kReferenceSpanMs = int64_t{24} * 3600 * 1000;
  static constexpr size_t kMinReferenceRuns = 96;
  static constexpr size_t kMaxReferenceRuns = 200;
  // How fast the exported level follows the runs: a weight of 1/48 per run
  // (half a day at the bundled schedule).
  static constexpr double kLevelWeight = 1.0 / 48;

  // One (op, metric)'s evidence.
  struct Evidence {
    double worse = 0;     // the CUSUM of a shift to worse, σ units
    double recovery = 0;  // while raised: the CUSUM of runs back within k of the reference
    double level = 0;     // smoothed log-ratio to the reference, oriented worse-positive
    uint64_t runs = 0;    // runs compared
    bool raised = false;
    int64_t since_ms = 0;   // the start of the run where `worse` last left 0
    int64_t raised_ms = 0;  // the raising run's end
    bool operator==(const Evidence&) const = default;
  };
  struct Change {
    std::string op;
    std::string metric;
    bool raised = false;
    double ratio = 0;  // the metric's value / the reference's, smoothed
    int64_t since_ms = 0;
  };

  // The reference's runs (store ids, oldest first); empty while not chosen.
  const std::vector<int64_t>& Reference() const { return reference_; }
  int64_t ReferenceAfterMs() const { return reference_after_ms_; }
  // Chooses the reference from `starts` (the learnable runs with known
  // conditions, oldest first, ids beside them) once they span a day; false
  // while they do not. `after_ms`: the newest pinned baseline's time.
  bool ChooseReference(std::span<const int64_t> ids, std::span<const int64_t> starts,
                       int64_t after_ms);
  // Forgets everything: a newer pinned baseline.
  void Restart(int64_t after_ms);

  // Compares a run's metrics with the reference's prediction at its stress
  // (`predicted`: ModelBaselineAt over the reference's points); the changes
  // of raised state it caused.
  std::vector<Change> Update(const Baseline& predicted, std::span<const MetricSample> metrics,
                             const BaselinePolicy& policy, int64_t start_ms, int64_t end_ms);

  bool Raised(std::string_view op, std::string_view metric) const;
  bool AnyRaised() const;
  // value / reference of the metric, smoothed (0.95: 5 % fewer IOPS, or a
  // mean 5 % shorter; 1.05 the reverse); nullopt before the first comparison.
  std::optional<double> Ratio(std::string_view op, std::string_view metric) const;
  const std::map<std::pair<std::string, std::string>, Evidence, std::less<>>& All() const {
    return evidence_;
  }
  void Restore(std::vector<int64_t> reference, int64_t after_ms,
               std::map<std::pair<std::string, std::string>, Evidence, std::less<>> evidence);

  // The reference's points as last loaded (not stored: reloaded by ids).
  std::vector<ModelPoint>& PointsCache() { return points_; }
  const std::vector<ModelPoint>& Points() const { return points_; }

  bool operator==(const DriftWatch& other) const {
    return reference_ == other.reference_ && reference_after_ms_ == other.reference_after_ms_ &&
           evidence_ == other.evidence_;
  }

 private:
  std::vector<int64_t> reference_;
  int64_t reference_after_ms_ = 0;
  std::map<std::pair<std::string, std::string>, Evidence, std::less<>> evidence_;
  std::vector<ModelPoint> points_;
};

}  // namespace iowatch::probes
