#include "probes/verdicts/passive/passive_drift.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "probes/verdicts/passive/passive_judge.h"
#include "tests/unit/probes/verdicts/synthetic_minutes.h"

namespace iowatch::probes {
namespace {

constexpr int64_t kDayMs = int64_t{24} * 3600 * 1000;
constexpr int kMinutesADay = 24 * 60;

// `days` of minutes of the synthetic disk (its rate wandering over 100 to
// 1,600 a second), every request slower by loss_per_day for each day past
// `drift_from_day`.
std::vector<PassiveWindow> DriftingDays(int days, double drift_from_day, double loss_per_day,
                                        uint64_t seed) {
  std::vector<PassiveWindow> out = test_data::Minutes(test_data::Disk{}, days * kMinutesADay, seed);
  for (PassiveWindow& w : out) {
    const double day = static_cast<double>(w.start_ms) / kDayMs;
    w.mean_seconds *= 1 + loss_per_day * std::max(0.0, day - drift_from_day);
  }
  return out;
}

struct Raise {
  double day = 0;
  RegressionChange change;
};

// The judge's raises and clears over `windows`.
std::vector<Raise> Changes(PassiveJudge& judge, const std::vector<PassiveWindow>& windows) {
  std::vector<Raise> out;
  for (const PassiveWindow& w : windows) {
    const PassiveVerdict v = judge.Judge(w);
    if (v.change) out.push_back({static_cast<double>(w.end_ms) / kDayMs, *v.change});
  }
  return out;
}

// 4 % a day from day 5 (after the first day and three days of calibration):
// no window is ever 20 % off a model refitted every hour from the last two
// days, but that model against the first day's, at the first day's loads,
// is 10 % slower about a day after the disk is (the two days it learns from
// lag), and six refits in a row say so.
TEST(PassiveDrift, ASlowLossTheWindowsNeverSeeIsRaised) {
  PassiveJudge judge;
  const std::vector<Raise> changes = Changes(judge, DriftingDays(12, 5, 0.04, 7));
  ASSERT_FALSE(changes.empty());
  const Raise& first = changes.front();
  EXPECT_TRUE(first.change.regressed);
  EXPECT_TRUE(first.change.drift);
  EXPECT_GE(first.change.verdict.ratio, 1.1);
  EXPECT_GT(first.day, 7.5) << "raised before the loss was 10 %";
  EXPECT_LT(first.day, 9.5) << "raised " << first.day - 5 << " days into the loss";
  EXPECT_GE(first.change.since_ms, 5 * kDayMs);
  EXPECT_TRUE(judge.Regressed({"read", "all", PassiveSource::kDiskstats}));
  const PassiveDrift* drift = judge.Drift({"read", "all", PassiveSource::kDiskstats});
  ASSERT_NE(drift, nullptr);
  EXPECT_TRUE(drift->Raised());
  EXPECT_GT(*drift->Ratio(), 1.15);
}

// A month of a healthy disk whose load wanders: the drift watch compares
// (its ratio stays within 2 % of 1) and raises nothing.
TEST(PassiveDrift, AHealthyMonthIsNeverRaised) {
  PassiveJudge judge;
  const std::vector<Raise> changes = Changes(judge, DriftingDays(30, 0, 0, 11));
  for (const Raise& r : changes) {
    ADD_FAILURE() << "day " << r.day << (r.change.drift ? " drift" : " window")
                  << (r.change.regressed ? " raised" : " cleared");
  }
  const PassiveDrift* drift = judge.Drift({"read", "all", PassiveSource::kDiskstats});
  ASSERT_NE(drift, nullptr);
  ASSERT_TRUE(drift->Ratio());
  EXPECT_NEAR(*drift->Ratio(), 1, 0.02);
  EXPECT_GT(drift->State().calibration_fits, 24u);
}

// The reference is chosen from the first day of learned windows, thinned to
// at most kMaxReferencePoints, and reported once by the verdict that chose
// it (the store keeps those windows).
TEST(PassiveDrift, TheFirstDayIsChosenOnceAndReported) {
  PassiveJudge judge;
  size_t reported = 0;
  std::vector<PassivePoint> reference;
  for (const PassiveWindow& w : DriftingDays(2, 0, 0, 3)) {
    const PassiveVerdict v = judge.Judge(w);
    if (!v.reference.empty()) {
      ++reported;
      reference = v.reference;
    }
  }
  EXPECT_EQ(reported, 1u);
  ASSERT_EQ(reference.size(), PassiveDrift::kMaxReferencePoints);
  EXPECT_EQ(reference.front().start_ms, 0);
  EXPECT_LT(reference.back().start_ms, kDayMs);
  const PassiveDrift* drift = judge.Drift({"read", "all", PassiveSource::kDiskstats});
  ASSERT_NE(drift, nullptr);
  EXPECT_EQ(drift->ReferencePoints(), reference);
}

// A judge restored from its state, learned windows and reference goes on
// exactly as the one that never stopped: the same raise on the same window.
TEST(PassiveDrift, ARestoredWatchGoesOnAsTheOneThatNeverStopped) {
  const std::vector<PassiveWindow> windows = DriftingDays(12, 5, 0.04, 7);
  const auto half = windows.begin() + 6 * kMinutesADay;
  PassiveJudge before;
  std::vector<PassivePoint> learned;
  std::vector<PassivePoint> reference;
  for (auto it = windows.begin(); it != half; ++it) {
    PassiveVerdict v = before.Judge(*it);
    learned.insert(learned.end(), v.learned.begin(), v.learned.end());
    if (!v.reference.empty()) reference = v.reference;
  }
  const PassiveSeriesKey key{"read", "all", PassiveSource::kDiskstats};
  ASSERT_FALSE(reference.empty());
  PassiveJudge after;
  after.Restore(key, before.StateOf(key), learned, reference);
  EXPECT_EQ(after.StateOf(key), before.StateOf(key));
  std::optional<double> raised_before;
  std::optional<double> raised_after;
  for (auto it = half; it != windows.end(); ++it) {
    const PassiveVerdict a = before.Judge(*it);
    const PassiveVerdict b = after.Judge(*it);
    if (a.change && !raised_before) raised_before = static_cast<double>(it->end_ms) / kDayMs;
    if (b.change && !raised_after) raised_after = static_cast<double>(it->end_ms) / kDayMs;
  }
  ASSERT_TRUE(raised_before);
  EXPECT_EQ(raised_after, raised_before);
}

}  // namespace
}  // namespace iowatch::probes
