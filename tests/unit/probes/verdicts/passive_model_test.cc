#include "probes/verdicts/passive/passive_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/unit/probes/verdicts/synthetic_minutes.h"

namespace iowatch::probes {
namespace {

using test_data::Disk;
using test_data::Minutes;
using test_data::TrueMean;

PassivePolicy Policy() { return PassivePolicy{}; }

TEST(PassiveModel, PredictsTheLatencyAtTheWindowsLoad) {
  const Disk disk;
  const std::optional<PassiveModel> model = PassiveModel::Learn(Minutes(disk, 600, 1), Policy());
  ASSERT_TRUE(model);
  EXPECT_EQ(model->Windows(), 600u);
  EXPECT_NEAR(model->Sigma(), disk.sigma, 0.01);
  for (double rate : {150.0, 500.0, 1500.0}) {
    PassiveWindow w = Minutes(disk, 1, 2).front();
    w.rate = rate;
    w.requests = static_cast<uint64_t>(rate * 60);
    const PassivePrediction p = model->At(w, Policy());
    ASSERT_TRUE(p.outside.empty()) << p.outside;
    EXPECT_NEAR(p.mean_seconds / TrueMean(rate), 1, 0.05) << rate;
    EXPECT_DOUBLE_EQ(p.bound_ratio, 1.2);  // 3σ of 3 % is below the tolerance
  }
}

// A stalled minute now and then (one in a hundred, 5x slower) does not make
// the disk look noisy: the model's σ stays within a third of the disk's.
TEST(PassiveModel, AFewStalledMinutesDoNotMakeTheDiskLookNoisy) {
  const Disk disk;
  std::vector<PassiveWindow> windows = Minutes(disk, 600, 1);
  for (size_t i = 0; i < windows.size(); i += 100) windows[i].mean_seconds *= 5;
  const std::optional<PassiveModel> model = PassiveModel::Learn(windows, Policy());
  ASSERT_TRUE(model);
  EXPECT_LT(model->Sigma(), disk.sigma * 4 / 3);
}

// Above the rates the windows covered (beyond a tenth of their range) the
// line is not extrapolated: the window is outside, and says why.
TEST(PassiveModel, NeverPredictsAboveTheLoadItCovered) {
  const Disk disk;
  const std::optional<PassiveModel> model = PassiveModel::Learn(Minutes(disk, 600, 1), Policy());
  ASSERT_TRUE(model);
  PassiveWindow w = Minutes(disk, 1, 2).front();
  w.rate = 5000;
  w.requests = 300'000;
  const PassivePrediction p = model->At(w, Policy());
  EXPECT_EQ(p.mean_seconds, 0);
  EXPECT_NE(p.outside.find("rate 5000/s above the"), std::string::npos) << p.outside;
  // Lighter than every window: predicted at the lightest they covered.
  w.rate = 10;
  w.requests = 600;
  EXPECT_TRUE(model->At(w, Policy()).outside.empty());
  // Steal the windows never saw: no slope, so no margin either.
  w.rate = 500;
  w.requests = 30'000;
  w.steal = 0.05;
  EXPECT_NE(model->At(w, Policy()).outside.find("steal 5 %"), std::string::npos);
}

// A minute of 50 requests says less than one of 50,000: its bound is wider
// when the requests scatter, and the model knows by how much (c²).
TEST(PassiveModel, FewRequestsWidenTheBound) {
  Disk disk;
  disk.lo = 1;  // 60 to 96,000 requests a minute
  disk.cv = 3;  // a disk whose requests scatter widely
  PassivePolicy policy = Policy();
  policy.tolerance = 0;  // the statistical bound alone
  const std::optional<PassiveModel> model = PassiveModel::Learn(Minutes(disk, 2000, 3), policy);
  ASSERT_TRUE(model);
  EXPECT_NEAR(model->RequestCv2(), disk.cv * disk.cv, 0.3 * disk.cv * disk.cv);
  PassiveWindow few = Minutes(disk, 1, 4).front();
  few.rate = 1;
  few.requests = 60;
  PassiveWindow many = few;
  many.requests = 60'000;
  const PassivePrediction a = model->At(few, policy);
  const PassivePrediction b = model->At(many, policy);
  ASSERT_TRUE(a.outside.empty() && b.outside.empty());
  EXPECT_GT(a.bound_ratio, b.bound_ratio + 0.5);
}

// A closed-loop workload on a disk 40 % slower does fewer requests: its
// windows move up and to the left, above the rising line, and their ratio
// to the prediction is beyond the bound.
TEST(PassiveModel, AClosedLoopSlowdownStaysAboveTheLine) {
  const Disk disk;
  const std::optional<PassiveModel> model = PassiveModel::Learn(Minutes(disk, 600, 1), Policy());
  ASSERT_TRUE(model);
  Disk slow = disk;
  slow.slower = 1.4;
  slow.lo = disk.lo / 1.4;
  slow.hi = disk.hi / 1.4;
  int bad = 0;
  const std::vector<PassiveWindow> windows = Minutes(slow, 100, 5);
  for (const PassiveWindow& w : windows) {
    const PassivePrediction p = model->At(w, Policy());
    ASSERT_TRUE(p.outside.empty()) << p.outside;
    bad += w.mean_seconds / p.mean_seconds > p.bound_ratio;
  }
  EXPECT_GE(bad, 95);
  // The same disk, healthy: none.
  int healthy_bad = 0;
  for (const PassiveWindow& w : Minutes(disk, 100, 6)) {
    const PassivePrediction p = model->At(w, Policy());
    healthy_bad += w.mean_seconds / p.mean_seconds > p.bound_ratio;
  }
  EXPECT_EQ(healthy_bad, 0);
}

// Windows that cannot teach: too few requests, a probe inside, counters
// reset. Too few windows, or an hour not yet covered: no model.
TEST(PassiveModel, LearnsOnlyFromWindowsThatCanTeach) {
  const Disk disk;
  std::vector<PassiveWindow> windows = Minutes(disk, 100, 7);
  windows[0].requests = 10;
  windows[1].probe = true;
  windows[2].counters_reset = true;
  const std::optional<PassiveModel> model = PassiveModel::Learn(windows, Policy());
  ASSERT_TRUE(model);
  EXPECT_EQ(model->Windows(), 97u);
  EXPECT_FALSE(PassiveModel::Learn(Minutes(disk, 59, 7), Policy()));
  // What a judge keeps of a learned window: 40 bytes, two days of a disk's
  // two ops in 225 KiB.
  EXPECT_EQ(sizeof(PassivePoint), 40u);
  PassivePolicy two_hours = Policy();
  two_hours.min_span_ms = 2 * 3600 * 1000;
  EXPECT_FALSE(PassiveModel::Learn(Minutes(disk, 100, 7), two_hours));
}

// A host whose steal stays at one level (1.5 %): no slope for it, and a
// window at that same level is inside what the model covered.
TEST(PassiveModel, AWindowAtTheOneStealItLearnedIsInside) {
  std::vector<PassiveWindow> windows = test_data::Minutes(test_data::Disk{}, 600, 1);
  for (PassiveWindow& w : windows) w.steal = 0.015;
  const std::optional<PassiveModel> model = PassiveModel::Learn(windows, PassivePolicy{});
  ASSERT_TRUE(model);
  const PassivePrediction p = model->At(windows[300], PassivePolicy{});
  EXPECT_TRUE(p.outside.empty()) << p.outside;
}

// Five minutes of a steal burst (30 %) among hours without: too few to give
// steal a slope, and too few to cover it. A later burst's minute is outside
// the model, not predicted as if steal did nothing (which raised healthy
// disks of a simulated fleet whose steal comes in bursts).
TEST(PassiveModel, AFewMinutesOfStealCoverItNoMoreThanTheyGiveItASlope) {
  std::vector<PassiveWindow> windows = test_data::Minutes(test_data::Disk{}, 600, 1);
  for (size_t i = 300; i < 305; ++i) windows[i].steal = 0.3;
  const std::optional<PassiveModel> model = PassiveModel::Learn(windows, PassivePolicy{});
  ASSERT_TRUE(model);
  PassiveWindow burst = windows[100];
  burst.steal = 0.3;
  const PassivePrediction p = model->At(burst, PassivePolicy{});
  EXPECT_NE(p.outside.find("steal"), std::string::npos) << p.outside;
  EXPECT_TRUE(model->At(windows[100], PassivePolicy{}).outside.empty());
  for (const PassiveWindow& w : windows) {
    if (w.steal == 0) {
      EXPECT_TRUE(model->At(w, PassivePolicy{}).outside.empty()) << w.rate;
    }
  }
}

// A steady load's rate, without the spread a slope needs, is covered a
// factor of two beyond its tenth-highest minute: a model freshly learned
// from its first hour judges every minute of that load, and a minute at
// three times its rate is outside.
TEST(PassiveModel, AFreshModelOfASteadyLoadCoversAllOfIt) {
  const test_data::Disk steady{.lo = 900, .hi = 1100};
  const std::vector<PassiveWindow> windows = test_data::Minutes(steady, 61, 3);
  const std::optional<PassiveModel> model = PassiveModel::Learn(windows, PassivePolicy{});
  ASSERT_TRUE(model);
  for (const PassiveWindow& w : test_data::Minutes(steady, 300, 4)) {
    EXPECT_EQ(model->At(w, PassivePolicy{}).outside, "") << w.rate;
  }
  PassiveWindow busier = windows[0];
  busier.rate = 3300;
  busier.requests = 3300 * 60;
  EXPECT_NE(model->At(busier, PassivePolicy{}).outside.find("rate"), std::string::npos);
}

// Where the requests arrive whatever the disk does and latency falls with
// load, the model follows the fall, and its bound is narrower where the
// minutes are steadier (the busy ones).
TEST(PassiveModel, FollowsALatencyThatFallsWithAnOpenLoad) {
  const std::optional<PassiveModel> model =
      PassiveModel::Learn(test_data::BurstyMinutes(120, 5), Policy());
  ASSERT_TRUE(model);
  EXPECT_LT(model->RateSlope(), 0);
  PassiveWindow busy = test_data::BurstyMinutes(4, 6)[3];
  PassiveWindow quiet = test_data::BurstyMinutes(4, 6)[0];
  const PassivePrediction at_busy = model->At(busy, Policy());
  const PassivePrediction at_quiet = model->At(quiet, Policy());
  ASSERT_TRUE(at_busy.outside.empty() && at_quiet.outside.empty());
  EXPECT_NEAR(at_busy.mean_seconds / 580e-6, 1, 0.1);
  EXPECT_NEAR(at_quiet.mean_seconds / 1.2e-3, 1, 0.15);
  EXPECT_LT(at_busy.bound_ratio, 1.4);  // 3σ of 7 %
  EXPECT_GT(at_quiet.bound_ratio, 1.8);
}

// A closed loop's lighter minutes are its slower ones (rate = depth /
// latency): no falling line, whatever the points say.
TEST(PassiveModel, NeverLetsAClosedLoopsLatencyFallWithItsRate) {
  const std::optional<PassiveModel> model =
      PassiveModel::Learn(test_data::ClosedLoopMinutes(120, 7), Policy());
  ASSERT_TRUE(model);
  EXPECT_GE(model->RateSlope(), 0);
}

}  // namespace
}  // namespace iowatch::probes
