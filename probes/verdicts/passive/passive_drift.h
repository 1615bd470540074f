// PassiveDrift: a passive series' slow drift. The series' model is refitted
// every hour from its last two days of learned windows (passive_judge.h),
// so a disk that loses a few percent a day is followed down and no window
// is ever judged slower than the model. Its first day is therefore also
// kept, frozen: the model fitted on the first day of learned windows
// (thinned to kMaxReferencePoints), and those windows' loads.
//
// At each refit, the refitted model and the first day's are compared at the
// first day's own loads: the level is the median over those loads of
// log(refitted / first day's prediction), less where it sat over the
// calibration (the refits of the three days after the first: two models
// fitted on different days differ by a few percent for good, which is not a
// drift). Comparing two models at the same loads, rather than each window
// against the first day, leaves out what the load of the hour does: a night
// whose few requests the first day's model predicted a little low is the
// same night at every refit. A level of kMaterial (10 % slower) or more at
// kHold refits in a row raises; below half of it at kHold refits in a row
// clears.
//
// A load the refitted model does not cover is left out of the median, and
// nothing is said when it covers fewer than half of the first day's loads.
// The refitted model lags the disk by about a day (its two days of windows),
// so a drift is raised about a day after it is 10 % slower.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "probes/verdicts/passive/passive_model.h"

namespace iowatch::probes {

struct PassiveDriftState {
  int64_t calibrate_until_ms = 0;
  uint64_t calibration_fits = 0;
  double calibration_sum = 0;   // of the calibration's levels, log units
  std::optional<double> level;  // the last refit's, log units, past the calibration
  uint32_t streak = 0;          // refits in a row beyond the raise (or, raised, below the clear)
  bool raised = false;
  int64_t since_ms = 0;  // raised: the refit whose level first crossed kMaterial
  bool operator==(const PassiveDriftState&) const = default;
};

class PassiveDrift {
 public:
  static constexpr int64_t kReferenceSpanMs = int64_t{24} * 3600 * 1000;
  static constexpr size_t kMaxReferencePoints = 240;
  static constexpr int64_t kCalibrationMs = int64_t{3} * 24 * 3600 * 1000;
  static constexpr uint64_t kMinCalibrationFits = 24;
  static constexpr uint32_t kHold = 6;
  // A mean 10 % slower than the first day's, as the probes' mean latency.
  static constexpr double kMaterial = 0.0953101798043249;  // log(1.1)

  struct Change {
    bool raised = false;
    double ratio = 0;  // the level, as a ratio
    int64_t since_ms = 0;
  };

  bool Chosen() const { return reference_.has_value(); }
  // Chooses the reference once `learned` (the series' learned windows,
  // oldest first) spans a day: true when chosen now. Its points, to be kept
  // for a restart, are ReferencePoints().
  bool Choose(const std::deque<PassivePoint>& learned, const PassivePolicy& policy);
  // Compares the series' refitted model (fitted at `now_ms`) with the first
  // day's; the change of raised state it made.
  std::optional<Change> Compare(const PassiveModel& refitted, int64_t now_ms,
                                const PassivePolicy& policy);

  bool Raised() const { return state_.raised; }
  int64_t SinceMs() const { return state_.raised ? state_.since_ms : 0; }
  // The series' latency over its first day's at the same loads (1.12: 12 %
  // slower); nullopt before a refit past the calibration.
  std::optional<double> Ratio() const;
  const std::vector<PassivePoint>& ReferencePoints() const { return points_; }
  const PassiveDriftState& State() const { return state_; }
  // A restart: the reference's points (none: not chosen yet) and the state.
  void Restore(std::span<const PassivePoint> reference, const PassiveDriftState& state,
               const PassivePolicy& policy);

 private:
  // The median log-ratio of `refitted` to the reference at the reference's
  // loads it covers; nullopt when it covers fewer than half of them.
  std::optional<double> LevelOf(const PassiveModel& refitted, const PassivePolicy& policy) const;

  std::vector<PassivePoint> points_;
  std::optional<PassiveModel> reference_;
  PassiveDriftState state_;
};

}  // namespace iowatch::probes
