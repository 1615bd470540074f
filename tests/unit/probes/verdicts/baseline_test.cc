// Baseline math: median/MAD learning, metric-by-metric comparison with the
// noise-aware threshold, and the hysteresis tracker. The whole policy on
// synthetic series is in baseline_series_test.cc.
#include "probes/verdicts/baseline.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/unit/probes/verdicts/synthetic_disk.h"

namespace iowatch::probes {
namespace {

std::vector<std::vector<MetricSample>> Runs(std::string_view metric,
                                            const std::vector<double>& values) {
  std::vector<std::vector<MetricSample>> runs;
  for (double v : values) runs.push_back({{"read", std::string(metric), v}});
  return runs;
}

MetricBaseline LearnOne(const std::vector<double>& values) {
  const auto learned = LearnMetrics(Runs("iops", values));
  EXPECT_EQ(learned.size(), 1u);
  return learned.empty() ? MetricBaseline{} : learned.front();
}

TEST(LearnMetricsTest, OddCountMedianAndMad) {
  const MetricBaseline b = LearnOne({4, 1, 100, 3, 2});
  EXPECT_EQ(b.op, "read");
  EXPECT_EQ(b.metric, "iops");
  EXPECT_DOUBLE_EQ(b.median, 3);
  EXPECT_DOUBLE_EQ(b.spread, 1.4826 * 1);  // deviations {1, 2, 97, 0, 1}
}

TEST(LearnMetricsTest, EvenCountAveragesTheMiddleTwo) {
  const MetricBaseline b = LearnOne({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(b.median, 2.5);
  EXPECT_DOUBLE_EQ(b.spread, 1.4826 * 1);  // deviations {1.5, 1.5, 0.5, 0.5}
  EXPECT_DOUBLE_EQ(LearnOne({10, 20}).median, 15);
  EXPECT_DOUBLE_EQ(LearnOne({10, 20}).spread, 1.4826 * 5);
}

TEST(LearnMetricsTest, IdenticalRunsHaveZeroSpread) {
  const MetricBaseline b = LearnOne({7, 7, 7, 7, 7});
  EXPECT_DOUBLE_EQ(b.median, 7);
  EXPECT_DOUBLE_EQ(b.spread, 0);
  EXPECT_DOUBLE_EQ(LearnOne({42}).median, 42);
  EXPECT_DOUBLE_EQ(LearnOne({42}).spread, 0);
}

TEST(LearnMetricsTest, OneWildRunInFiveBarelyMoves) {
  const MetricBaseline calm = LearnOne({100, 101, 99, 100.5, 99.5});
  for (double wild : {0.0, 1.0, 10000.0, 1e12}) {
    const MetricBaseline b = LearnOne({100, 101, 99, 100.5, wild});
    EXPECT_NEAR(b.median, calm.median, 1) << wild;
    EXPECT_LT(b.spread, 2) << wild;  // a standard deviation would be ~wild / 2
  }
}

TEST(LearnMetricsTest, KeysByOpAndMetricInFirstSeenOrder) {
  const std::vector<std::vector<MetricSample>> runs = {
      {{"read", "iops", 10}, {"read", "clat_mean_seconds", 1}, {"write", "iops", 5}},
      {{"read", "iops", 12},
       {"read", "clat_mean_seconds", 3},
       {"write", "iops", 7},
       {"write", "slat_mean_seconds", 0.5}},
      {{"read", "iops", 11},
       {"read", "clat_mean_seconds", 2},
       {"write", "iops", 6},
       {"write", "slat_mean_seconds", 1.5}},
  };
  const auto b = LearnMetrics(runs);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0], (MetricBaseline{"read", "iops", 11, 1.4826}));
  EXPECT_EQ(b[1], (MetricBaseline{"read", "clat_mean_seconds", 2, 1.4826}));
  EXPECT_EQ(b[2], (MetricBaseline{"write", "iops", 6, 1.4826}));
  // Built from the two runs that have it.
  EXPECT_EQ(b[3], (MetricBaseline{"write", "slat_mean_seconds", 1, 1.4826 * 0.5}));
  EXPECT_TRUE(LearnMetrics({}).empty());
}

using test_data::MakeBaseline;

// A policy that judges every metric, clat and slat included (by default only
// throughput and total latency are judged).
BaselinePolicy JudgingEverything(BaselinePolicy policy = {}) {
  policy.metrics.clear();
  for (const MetricSpec& spec : BaselineMetrics()) policy.metrics.emplace_back(spec.name);
  return policy;
}

MetricVerdict CompareOne(const MetricBaseline& base, double value,
                         const BaselinePolicy& policy = JudgingEverything()) {
  const std::vector<MetricSample> run = {{base.op, base.metric, value}};
  const auto v = Compare(MakeBaseline({base}), run, policy);
  EXPECT_EQ(v.size(), 1u);
  return v.empty() ? MetricVerdict{} : v.front();
}

TEST(BaselineTest, FindByOpAndMetric) {
  const Baseline b = MakeBaseline({{"read", "iops", 1, 0}, {"write", "iops", 2, 0}});
  ASSERT_NE(b.Find("write", "iops"), nullptr);
  EXPECT_EQ(b.Find("write", "iops")->median, 2);
  EXPECT_EQ(b.Find("read", "bandwidth_bytes"), nullptr);
  EXPECT_EQ(b.Find("trim", "iops"), nullptr);
}

TEST(CompareTest, ThroughputDropIsBadRiseIsNot) {
  const MetricBaseline iops{"read", "iops", 1000, 0};
  const MetricVerdict drop = CompareOne(iops, 700);
  EXPECT_TRUE(drop.bad);
  EXPECT_DOUBLE_EQ(drop.value, 700);
  EXPECT_DOUBLE_EQ(drop.baseline, 1000);
  EXPECT_DOUBLE_EQ(drop.ratio, 0.7);
  EXPECT_DOUBLE_EQ(drop.threshold, 200);
  EXPECT_FALSE(CompareOne(iops, 810).bad);
  EXPECT_FALSE(CompareOne(iops, 800).bad);  // exactly at the threshold is still good
  EXPECT_FALSE(CompareOne(iops, 1e9).bad);
}

TEST(CompareTest, LatencyRiseIsBadDropIsNot) {
  const MetricBaseline clat{"read", "clat_mean_seconds", 0.001, 0};
  const MetricVerdict rise = CompareOne(clat, 0.0016);
  EXPECT_TRUE(rise.bad);
  EXPECT_DOUBLE_EQ(rise.threshold, 0.0005);
  EXPECT_DOUBLE_EQ(rise.ratio, 1.6);
  EXPECT_FALSE(CompareOne(clat, 0.0014).bad);
  EXPECT_FALSE(CompareOne(clat, 0).bad);
  EXPECT_FALSE(CompareOne(clat, 1e-9).bad);
}

TEST(CompareTest, ToleranceByMetricKind) {
  BaselinePolicy policy = JudgingEverything();
  policy.throughput_tolerance = 0.1;
  policy.latency_tolerance = 0.3;
  policy.tail_tolerance = 0.7;
  auto threshold = [&](std::string_view metric) {
    return CompareOne({"write", std::string(metric), 100, 0}, 100, policy).threshold;
  };
  EXPECT_DOUBLE_EQ(threshold("iops"), 10);
  EXPECT_DOUBLE_EQ(threshold("bandwidth_bytes"), 10);
  EXPECT_DOUBLE_EQ(threshold("clat_mean_seconds"), 30);
  EXPECT_DOUBLE_EQ(threshold("clat_p50_seconds"), 30);
  EXPECT_DOUBLE_EQ(threshold("clat_p90_seconds"), 30);
  EXPECT_DOUBLE_EQ(threshold("lat_mean_seconds"), 30);
  EXPECT_DOUBLE_EQ(threshold("slat_mean_seconds"), 30);
  EXPECT_DOUBLE_EQ(threshold("clat_p99_seconds"), 70);
  EXPECT_DOUBLE_EQ(threshold("clat_p99_9_seconds"), 70);
  EXPECT_DOUBLE_EQ(threshold("lat_p50_seconds"), 30);
  EXPECT_DOUBLE_EQ(threshold("lat_p99_seconds"), 70);
  EXPECT_DOUBLE_EQ(threshold("lat_p99_9_seconds"), 70);
}

TEST(CompareTest, ThresholdIsTheLargerOfToleranceAndSpread) {
  // Quiet baseline: 20 % of 1000 beats 3 × 10.
  const MetricBaseline quiet{"read", "iops", 1000, 10};
  EXPECT_DOUBLE_EQ(CompareOne(quiet, 1000).threshold, 200);
  EXPECT_TRUE(CompareOne(quiet, 799).bad);
  // Noisy baseline: 3 × 100 beats 20 % of 1000, so a 25 % drop is tolerated.
  const MetricBaseline noisy{"read", "iops", 1000, 100};
  EXPECT_DOUBLE_EQ(CompareOne(noisy, 1000).threshold, 300);
  EXPECT_FALSE(CompareOne(noisy, 750).bad);
  EXPECT_TRUE(CompareOne(noisy, 699).bad);
  BaselinePolicy k1 = JudgingEverything();
  k1.spread_factor = 1;
  EXPECT_DOUBLE_EQ(CompareOne(noisy, 1000, k1).threshold, 200);
  EXPECT_TRUE(CompareOne(noisy, 750, k1).bad);
}

TEST(CompareTest, ZeroBaselineIsNeverBad) {
  const MetricVerdict v = CompareOne({"read", "slat_mean_seconds", 0, 0}, 1e-6);
  EXPECT_FALSE(v.bad);
  EXPECT_EQ(v.ratio, 0);
}

TEST(CompareTest, SkipsMetricsMissingOnEitherSideOrUnknown) {
  const Baseline b = MakeBaseline(
      {{"read", "iops", 100, 0}, {"read", "clat_mean_seconds", 1, 0}, {"read", "made_up", 1, 0}});
  const std::vector<MetricSample> run = {{"read", "clat_mean_seconds", 5},
                                         {"write", "iops", 1},
                                         {"read", "made_up", 100},
                                         {"read", "iops", 10}};
  const auto v = Compare(b, run, JudgingEverything());
  ASSERT_EQ(v.size(), 2u);  // in the run's order
  EXPECT_EQ(v[0].metric, "clat_mean_seconds");
  EXPECT_TRUE(v[0].bad);
  EXPECT_EQ(v[1].metric, "iops");
  EXPECT_TRUE(v[1].bad);
}

// --- RegressionTracker ---

// Against a baseline of 100 that allows 20: a bad run at 50 (or `value`),
// a good one at 100.
MetricVerdict Verdict(bool bad, double value = 0, std::string metric = "iops") {
  MetricVerdict v;
  v.op = "read";
  v.metric = std::move(metric);
  v.value = value != 0 ? value : (bad ? 50 : 100);
  v.baseline = 100;
  v.threshold = 20;
  v.bad = bad;
  return v;
}

// Feeds one verdict per run; returns, per run, the number of changes.
std::vector<size_t> Feed(RegressionTracker& t, const std::string& pattern) {
  std::vector<size_t> changes;
  for (char c : pattern) {
    const std::vector<MetricVerdict> v = {Verdict(c == 'B')};
    changes.push_back(t.Update(v).size());
  }
  return changes;
}

TEST(RegressionTrackerTest, KBadRaiseOnceKGoodClearOnce) {
  RegressionTracker t(3);
  EXPECT_EQ(Feed(t, "BB"), (std::vector<size_t>{0, 0}));
  EXPECT_FALSE(t.Regressed("read", "iops"));
  EXPECT_EQ(Feed(t, "BBBB"), (std::vector<size_t>{1, 0, 0, 0}));
  EXPECT_TRUE(t.Regressed("read", "iops"));
  EXPECT_EQ(Feed(t, "GG"), (std::vector<size_t>{0, 0}));
  EXPECT_TRUE(t.Regressed("read", "iops"));
  EXPECT_EQ(Feed(t, "GGG"), (std::vector<size_t>{1, 0, 0}));
  EXPECT_FALSE(t.Regressed("read", "iops"));
}

TEST(RegressionTrackerTest, StreaksAreBrokenByTheOtherKind) {
  RegressionTracker t(3);
  Feed(t, "BBGBBGBBGBGB");
  EXPECT_FALSE(t.Regressed("read", "iops"));
  Feed(t, "BB");
  EXPECT_TRUE(t.Regressed("read", "iops"));
  Feed(t, "GGBGGBGBGG");
  EXPECT_TRUE(t.Regressed("read", "iops"));
  Feed(t, "G");
  EXPECT_FALSE(t.Regressed("read", "iops"));
}

TEST(RegressionTrackerTest, ChangeCarriesTheFlippingVerdict) {
  RegressionTracker t(2);
  const std::vector<MetricVerdict> first = {Verdict(true, 51)};
  const std::vector<MetricVerdict> second = {Verdict(true, 52)};
  EXPECT_TRUE(t.Update(first).empty());
  const auto raised = t.Update(second);
  ASSERT_EQ(raised.size(), 1u);
  EXPECT_EQ(raised[0].op, "read");
  EXPECT_EQ(raised[0].metric, "iops");
  EXPECT_TRUE(raised[0].regressed);
  EXPECT_EQ(raised[0].verdict, second[0]);

  const std::vector<MetricVerdict> good = {Verdict(false, 97)};
  t.Update(good);
  const auto cleared = t.Update(good);
  ASSERT_EQ(cleared.size(), 1u);
  EXPECT_FALSE(cleared[0].regressed);
  EXPECT_DOUBLE_EQ(cleared[0].verdict.value, 97);
}

// The raise says since when the metric is bad: the first bad run of the
// streak that raised it, not the run that completed the streak; a good run
// in between starts it again, and a clear forgets it.
TEST(RegressionTrackerTest, ARaiseCarriesTheFirstBadRunsStart) {
  RegressionTracker t(2);
  const std::vector<MetricVerdict> bad = {Verdict(true)};
  const std::vector<MetricVerdict> good = {Verdict(false)};
  t.Update(bad, 1'000, 1'500);
  t.Update(good, 2'000, 2'500);
  EXPECT_TRUE(t.Update(bad, 3'000, 3'500).empty());
  const auto raised = t.Update(bad, 4'000, 4'500);
  ASSERT_EQ(raised.size(), 1u);
  EXPECT_EQ(raised[0].since_ms, 3'000);
  EXPECT_EQ(t.RegressedSinceMs("read", "iops"), 3'000);
  t.Update(bad, 5'000, 5'500);  // later bad runs do not move it
  EXPECT_EQ(t.RegressedSinceMs("read", "iops"), 3'000);
  RegressionTracker restored(2);
  restored.Restore(t.Entries());
  EXPECT_EQ(restored.RegressedSinceMs("read", "iops"), 3'000);
  t.Update(good, 6'000, 6'500);
  const auto cleared = t.Update(good, 7'000, 7'500);
  ASSERT_EQ(cleared.size(), 1u);
  EXPECT_EQ(cleared[0].since_ms, 0);
  EXPECT_EQ(t.RegressedSinceMs("read", "iops"), 0);
  EXPECT_EQ(t.RegressedSinceMs("write", "iops"), 0);
}

// A good verdict whose allowed distance is wider than the bad runs' shift
// could not have seen it: it neither breaks a bad streak nor counts towards
// clearing. One that is itself shifted as far is no evidence either.
TEST(RegressionTrackerTest, OnlyGoodVerdictsThatCouldSeeTheShiftCount) {
  RegressionTracker t(3);
  MetricVerdict wide = Verdict(false, 60);  // 40 % below, allowed 300 %
  wide.threshold = 300;
  MetricVerdict shifted = Verdict(false, 45);  // as far as the bad ones, spared
  const std::vector<MetricVerdict> bad = {Verdict(true)};
  const std::vector<MetricVerdict> wide_good = {wide};
  const std::vector<MetricVerdict> shifted_good = {shifted};
  const std::vector<MetricVerdict> good = {Verdict(false)};
  t.Update(bad);
  t.Update(wide_good);
  t.Update(shifted_good);
  t.Update(bad);
  EXPECT_TRUE(t.AnyPending());
  EXPECT_EQ(t.Update(bad).size(), 1u);  // the third bad raises
  EXPECT_TRUE(t.Regressed("read", "iops"));
  for (int i = 0; i < 5; ++i) t.Update(wide_good);
  EXPECT_TRUE(t.Regressed("read", "iops"));
  t.Update(good);
  t.Update(good);
  EXPECT_EQ(t.Update(good).size(), 1u);
  EXPECT_FALSE(t.Regressed("read", "iops"));
  // A good run in the band that saw it breaks a streak as before.
  t.Update(bad);
  t.Update(good);
  EXPECT_FALSE(t.AnyPending());
}

// A clean run against the clean baseline whose spread allows more than the
// streak's shift still breaks the streak when it sits nearer its median than
// half that shift: hours of runs at the disk's own level are evidence
// against three bad runs of other bands spread among them. The same verdict
// of another band (a median a neighbour may have moved) breaks nothing.
TEST(RegressionTrackerTest, ACleanRunNearItsOwnLevelBreaksAStreakWhateverItsSpreadAllows) {
  MetricVerdict near = Verdict(false, 95);  // 5 % below, allowed 60 %
  near.threshold = 60;
  MetricVerdict halfway = Verdict(false, 70);  // 30 % below, allowed 60 %
  halfway.threshold = 60;
  const std::vector<MetricVerdict> bad = {Verdict(true)};  // 50 % below
  const std::vector<MetricVerdict> near_run = {near};
  const std::vector<MetricVerdict> halfway_run = {halfway};
  RegressionTracker t(3);
  t.Update(bad);
  t.Update(bad);
  t.Update(halfway_run, 0, 0, true);
  EXPECT_TRUE(t.AnyPending()) << "a run 30 % below could not see a 50 % shift";
  t.Update(near_run, 0, 0, false);
  EXPECT_TRUE(t.AnyPending()) << "another band's median may have moved";
  t.Update(near_run, 0, 0, true);
  EXPECT_FALSE(t.AnyPending());
  EXPECT_TRUE(t.Update(bad).empty());
  EXPECT_FALSE(t.Regressed("read", "iops"));
}

// A regression lasts: K bad runs 15 s apart that span 35 s (a host's stall
// under a virtual disk) do not raise with a 45 s span; a fourth does, and a
// good run in between starts the span again. Restored, a streak keeps its
// start.
TEST(RegressionTrackerTest, BadRunsMustSpanTheMinimumToRaise) {
  constexpr int64_t kRun = 5'000, kEvery = 15'000, kSpan = 45'000;
  RegressionTracker t(3, kSpan);
  const std::vector<MetricVerdict> bad = {Verdict(true)};
  const std::vector<MetricVerdict> good = {Verdict(false)};
  int64_t at = 1'000'000;
  auto feed = [&](const std::vector<MetricVerdict>& v) {
    const auto changes = t.Update(v, at, at + kRun);
    at += kEvery;
    return changes.size();
  };
  EXPECT_EQ(feed(bad) + feed(bad) + feed(bad), 0u);  // three over 35 s
  EXPECT_TRUE(t.AnyPending());
  RegressionTracker restored(3, kSpan);
  restored.Restore(t.Entries());
  EXPECT_EQ(restored.Entries(), t.Entries());
  EXPECT_EQ(feed(bad), 1u);  // the fourth: 50 s
  EXPECT_TRUE(t.Regressed("read", "iops"));
  EXPECT_EQ(restored.Update(bad, at - kEvery, at - kEvery + kRun).size(), 1u);

  RegressionTracker u(3, kSpan);
  at = 1'000'000;
  auto feed_u = [&](const std::vector<MetricVerdict>& v) {
    const auto changes = u.Update(v, at, at + kRun);
    at += kEvery;
    return changes.size();
  };
  feed_u(bad);
  feed_u(bad);
  feed_u(good);  // the streak and its span start again
  EXPECT_EQ(feed_u(bad) + feed_u(bad) + feed_u(bad), 0u);
  EXPECT_EQ(feed_u(bad), 1u);
  // Without a span (0), the hysteresis alone: three raise.
  RegressionTracker v(3, 0);
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(v.Update(bad, i, i).empty());
  EXPECT_EQ(v.Update(bad, 2, 2).size(), 1u);
}

// A quantile is judged in clean runs only: raised in the same slowdown as
// its op's mean, it clears when the mean does (as recovered with it); one
// raised before the mean's, or still bad, waits for its own good runs.
TEST(RegressionTrackerTest, AQuantileRaisedInTheMeansSlowdownClearsWithIt) {
  RegressionTracker t(2);
  // Latencies: worse is higher.
  const MetricVerdict mean_bad = Verdict(true, 200, "lat_mean_seconds");
  const MetricVerdict mean_good = Verdict(false, 100, "lat_mean_seconds");
  const MetricVerdict p99_bad = Verdict(true, 200, "lat_p99_seconds");
  int64_t at = 0;
  auto feed = [&](std::vector<MetricVerdict> v) {
    at += 15'000;
    return t.Update(v, at, at + 3'000);
  };
  feed({mean_bad});
  EXPECT_EQ(feed({mean_bad}).size(), 1u);  // the mean raised
  feed({mean_bad, p99_bad});               // clean runs: the quantile judged
  EXPECT_EQ(feed({mean_bad, p99_bad}).size(), 1u);
  EXPECT_TRUE(t.Regressed("read", "lat_p99_seconds"));
  feed({mean_good});  // busy runs: the quantile not judged
  const auto cleared = feed({mean_good});
  ASSERT_EQ(cleared.size(), 2u);
  EXPECT_EQ(cleared[0].metric, "lat_mean_seconds");
  EXPECT_TRUE(cleared[0].with.empty());
  EXPECT_EQ(cleared[1].metric, "lat_p99_seconds");
  EXPECT_FALSE(cleared[1].regressed);
  EXPECT_EQ(cleared[1].with, "lat_mean_seconds");
  EXPECT_FALSE(t.AnyRegressed());

  // The quantile first (a tail of its own), then the mean: the mean's
  // recovery says nothing of the tail.
  RegressionTracker u(2);
  for (int i = 0; i < 2; ++i) u.Update(std::vector<MetricVerdict>{p99_bad}, i, i);
  for (int i = 2; i < 4; ++i) u.Update(std::vector<MetricVerdict>{mean_bad}, i, i);
  for (int i = 4; i < 6; ++i) u.Update(std::vector<MetricVerdict>{mean_good}, i, i);
  EXPECT_FALSE(u.Regressed("read", "lat_mean_seconds"));
  EXPECT_TRUE(u.Regressed("read", "lat_p99_seconds"));
  // Still bad in the run that clears the mean: it stands.
  RegressionTracker w(1);
  w.Update(std::vector<MetricVerdict>{mean_bad}, 0, 0);
  w.Update(std::vector<MetricVerdict>{p99_bad}, 1, 1);
  w.Update(std::vector<MetricVerdict>{mean_good, p99_bad}, 2, 2);
  EXPECT_TRUE(w.Regressed("read", "lat_p99_seconds"));
}

TEST(RegressionTrackerTest, EntriesRestoreTheSameState) {
  RegressionTracker t(3);
  const std::vector<MetricVerdict> bad = {Verdict(true), Verdict(true, 0, "lat_mean_seconds")};
  for (int i = 0; i < 4; ++i) t.Update(bad);
  RegressionTracker restored(3);
  restored.Restore(t.Entries());
  EXPECT_EQ(restored.Entries(), t.Entries());
  EXPECT_TRUE(restored.Regressed("read", "iops"));
}

TEST(RegressionTrackerTest, MetricsAreIndependent) {
  RegressionTracker t(2);
  for (int i = 0; i < 2; ++i) {
    const std::vector<MetricVerdict> v = {Verdict(true, 0, "iops"),
                                          Verdict(false, 0, "clat_p99_seconds")};
    t.Update(v);
  }
  EXPECT_TRUE(t.Regressed("read", "iops"));
  EXPECT_FALSE(t.Regressed("read", "clat_p99_seconds"));
  EXPECT_FALSE(t.Regressed("write", "iops"));
  EXPECT_FALSE(t.Regressed("read", "never_seen"));
  t.Reset();
  EXPECT_FALSE(t.Regressed("read", "iops"));
}

TEST(RegressionTrackerTest, HysteresisOneFlipsEveryChangeAndZeroActsAsOne) {
  for (uint32_t k : {0u, 1u}) {
    RegressionTracker t(k);
    EXPECT_EQ(Feed(t, "GBBGGB"), (std::vector<size_t>{0, 1, 0, 1, 0, 1})) << k;
  }
}

}  // namespace
}  // namespace iowatch::probes
