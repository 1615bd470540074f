// PassiveJudge: one disk judged by the I/O it already does. Each series (op,
// size class, source) has its own model of latency under load
// (passive_model.h), learned from the disk's own earlier windows, and its
// own hysteresis (RegressionTracker: K bad windows raise, K good ones
// clear, as for the probes). Building a streak, a good window counts only
// where it could have seen the streak's shift (its bound narrower), and the
// K bad windows must fall within max_streak_windows judged ones: a bursty disk's busy
// minutes are bad in a slowdown while the quiet ones between, twice as
// noisy, stay good. Clearing, any good window at the disk's own level counts.
//
// A window is judged only where it can be: enough requests, no probe of
// iowatch's inside, counters that only grew, a model learned, its load
// inside what the model covered. Each window not judged says why.
//
// Not learning the slowdown: a window learns only once it is known to be
// good. Bad windows wait while their streak is undecided; if the streak
// breaks, they were noise and are learned; if it raises, they are dropped,
// and no series of the disk learns while any of them is regressed or has
// a streak open (a slow disk is slow in every series). The model is refitted
// from the newest `max_windows` learned windows every `refit_every` windows
// (every window until the first model), so it follows a disk's slow
// seasons but not a regression.
//
// A slow drift, which such a model follows down, is each series' drift
// watch's (passive_drift.h: at each refit, the refitted model against the
// series' first day's, frozen, at that day's loads). A series is regressed
// while either its hysteresis or its drift watch holds it raised; a drift
// does not stop the learning (the refits must follow the disk back, to
// clear it).
// Thread-safety: one owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "probes/verdicts/baseline.h"
#include "probes/verdicts/passive/passive_drift.h"
#include "probes/verdicts/passive/passive_model.h"
#include "probes/verdicts/passive/passive_window.h"

namespace iowatch::probes {

// The RegressionTracker metric of a passive series: its mean latency.
inline constexpr std::string_view kPassiveMetric = "lat_mean_seconds";

enum class PassiveReason {
  kJudged,
  kTooFewRequests,
  kProbe,
  kCountersReset,
  kLearning,
  kOutsideModel,
};
std::string_view ToString(PassiveReason reason);  // "judged", "too_few_requests", ...

struct PassiveJudgePolicy {
  PassivePolicy model;
  uint32_t hysteresis = 3;
  // A streak's bad windows all within this many judged windows of the
  // series: between the busy minutes of a bursty disk come quiet ones too
  // noisy to refute them, and bad minutes hours apart with only such minutes
  // between are no streak. Counted in judged windows, not time: a disk
  // whose evening has few minutes with enough requests keeps its streaks.
  uint32_t max_streak_windows = 15;
  size_t max_windows = 2880;  // two days of minutes learned from (40 bytes each)
  size_t refit_every = 60;    // windows learned between two fits
  bool operator==(const PassiveJudgePolicy&) const = default;
};

struct PassiveVerdict {
  PassiveWindow window;
  PassiveReason reason = PassiveReason::kJudged;
  std::string why;  // for kOutsideModel: where ("rate 900/s above ...")
  double predicted_seconds = 0;
  double ratio = 0;        // observed / predicted
  double bound_ratio = 0;  // observed / predicted above this is bad
  bool bad = false;
  std::optional<RegressionChange> change;  // a raise or clear this window caused
  // What the series learned because of this window: the window itself, or
  // the bad windows of a streak it broke (the store marks them learned).
  std::vector<PassivePoint> learned;
  // The points of the series' drift reference, when this window chose it
  // (the store keeps them for a restart).
  std::vector<PassivePoint> reference;
};

// A series' verdict state as a restart needs it: its hysteresis, the bad
// windows of an undecided streak, and where it stands in its refit cycle.
// The windows it learned from are kept apart (each stored once, when
// learned) and given back to Restore.
struct PassiveSeriesState {
  std::vector<RegressionTracker::Entry> tracker;
  std::vector<PassiveWindow> waiting;
  size_t since_fit = 0;
  PassiveDriftState drift;
  uint32_t streak_windows = 0;  // judged windows since the open streak's first bad one
  bool operator==(const PassiveSeriesState&) const = default;
};

// One series' key: op, size class, source.
using PassiveSeriesKey = std::tuple<std::string, std::string, PassiveSource>;

class PassiveJudge {
 public:
  explicit PassiveJudge(PassiveJudgePolicy policy = {}) : policy_(policy) {}

  // Judges a window of this disk (its series found or created), learning
  // from what it may.
  PassiveVerdict Judge(const PassiveWindow& window);

  bool Regressed(const PassiveSeriesKey& key) const;
  bool AnyRegressed() const;
  // The series' model, if learned.
  const PassiveModel* Model(const PassiveSeriesKey& key) const;
  size_t LearnedWindows(const PassiveSeriesKey& key) const;
  // When the series' standing regression began (its first bad window's
  // start, or the refit at which its drift first crossed the material
  // level: the earlier); 0 when none stands.
  int64_t RegressedSinceMs(const PassiveSeriesKey& key) const;
  // The series' drift watch, if it has the series.
  const PassiveDrift* Drift(const PassiveSeriesKey& key) const;

  // The series this judge has, and each one's state (for the store).
  std::vector<PassiveSeriesKey> Keys() const;
  PassiveSeriesState StateOf(const PassiveSeriesKey& key) const;
  // A series as a restart finds it: its state, the windows it had learned
  // from (oldest first; the newest max_windows are kept), from which its
  // model is fitted again, and its drift reference's points (none: not
  // chosen yet).
  void Restore(const PassiveSeriesKey& key, const PassiveSeriesState& state,
               std::span<const PassivePoint> learned, std::span<const PassivePoint> reference = {});

 private:
  struct Series {
    RegressionTracker tracker;
    std::deque<PassivePoint> learned;    // oldest first, at most max_windows
    std::vector<PassiveWindow> waiting;  // bad windows of an undecided streak
    std::optional<PassiveModel> model;
    size_t since_fit = 0;
    uint32_t streak_windows = 0;  // PassiveSeriesState's
    PassiveDrift drift;
    std::optional<PassiveDrift::Change> drift_change;  // the last refit's, not yet reported
    bool Regressed() const { return tracker.AnyRegressed() || drift.Raised(); }
  };

  Series& SeriesOf(const PassiveSeriesKey& key);
  // Whether any series of the disk is regressed or has a streak open.
  bool DiskSuspect() const;
  // Learns `point` (of the series `name`, which spreads the refits), noting
  // it in `learned`.
  void Learn(Series& series, const PassivePoint& point, std::string_view name,
             std::vector<PassivePoint>& learned);
  void Fit(Series& series, std::string_view name);
  PassiveVerdict Compare(Series& series, const PassiveWindow& window);
  PassiveVerdict JudgeLearnable(Series& series, const PassiveWindow& window);
  // The drift watch's part of a learnable window: its change, reported as
  // the series' when it flips the series' regressed state.
  void FeedDrift(Series& series, const PassiveWindow& window, bool regressed_before,
                 PassiveVerdict& v);

  PassiveJudgePolicy policy_;
  std::map<PassiveSeriesKey, Series> series_;
};

}  // namespace iowatch::probes
