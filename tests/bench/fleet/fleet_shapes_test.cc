// The fleet simulation's load and steal shapes (diurnal_disk.h, drawn per
// host by fleet_layout.cc): where a night batch puts the load, that bursts
// of steal are the only steal, that no steal is none, and that a seed draws
// the same fleet again, the same disks and faults under every shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "tests/bench/fleet/fleet_layout.h"
#include "tests/bench/verdicts/diurnal_disk.h"

namespace iowatch::fleet {
namespace {

using probes::RunRecord;
using probes::test_data::BurstAt;
using probes::test_data::DiurnalDisk;
using probes::test_data::DiurnalShape;
using probes::test_data::DrawStealBursts;
using probes::test_data::LoadLevel;
using probes::test_data::LoadShape;
using probes::test_data::StealBurst;
using probes::test_data::StealShape;

constexpr int64_t kEpochDayMs = 20'000 * kDayMs;  // a midnight (UTC) in 2024

// Others' requests/s beside the run, as its conditions say.
double ForeignLoad(const RunRecord& run) {
  const probes::RunConditions& c = *run.conditions;
  return static_cast<double>(c.device_ios - c.own_requests) / c.seconds;
}

// `days` of runs every 15 minutes from kEpochDayMs, on a slow disk.
std::vector<RunRecord> Runs(DiurnalShape shape, uint64_t seed, int days) {
  shape.base_latency_us = 3000;  // 1,000 I/Os a run, not 30,000: the shapes are the same
  DiurnalDisk disk(seed, shape);
  std::vector<RunRecord> runs;
  for (int64_t at = kEpochDayMs; at < kEpochDayMs + days * kDayMs; at += kIntervalMs) {
    runs.push_back(disk.Run(static_cast<int64_t>(runs.size()) + 1, at));
  }
  return runs;
}

TEST(FleetShapesTest, NightLoadPeaksBetweenOneAndFiveWithSteepEdges) {
  DiurnalShape night;
  night.load = LoadShape::kNight;
  double peak = 0;
  int64_t peak_at = -1;
  for (int64_t t = 0; t < kDayMs; t += kMinuteMs) {
    const double level = LoadLevel(night, kEpochDayMs + t);
    if (t < kHourMs || t >= 5 * kHourMs) {
      EXPECT_EQ(level, 0) << "load outside the batch at minute " << t / kMinuteMs;
    }
    if (t >= kHourMs + 10 * kMinuteMs && t <= 5 * kHourMs - 10 * kMinuteMs) {
      EXPECT_EQ(level, 1) << "the batch below its peak at minute " << t / kMinuteMs;
    }
    if (level > peak) peak = level, peak_at = t;
  }
  EXPECT_EQ(peak, 1);
  EXPECT_GE(peak_at, kHourMs);
  EXPECT_LT(peak_at, 5 * kHourMs);
  // The default stays the afternoon's: quiet at 4:00, the peak at 16:00.
  const DiurnalShape afternoon;
  EXPECT_NEAR(LoadLevel(afternoon, kEpochDayMs + 4 * kHourMs), 0, 1e-12);
  EXPECT_NEAR(LoadLevel(afternoon, kEpochDayMs + 16 * kHourMs), 1, 1e-12);
}

TEST(FleetShapesTest, NightRunsSeeTheLoadAtNightNotInTheAfternoon) {
  DiurnalShape night;
  night.load = LoadShape::kNight;
  double batch = 0, afternoon = 0;
  int batch_runs = 0, afternoon_runs = 0;
  for (const RunRecord& run : Runs(night, 7, 7)) {
    const int64_t t = run.start_unix_ms % kDayMs;
    if (t >= 2 * kHourMs && t < 4 * kHourMs) batch += ForeignLoad(run), ++batch_runs;
    if (t >= 13 * kHourMs && t < 19 * kHourMs) afternoon += ForeignLoad(run), ++afternoon_runs;
  }
  ASSERT_GT(batch_runs, 0);
  ASSERT_GT(afternoon_runs, 0);
  // night_load 30 against peak_load 3,000: a hundredth, noise and bursts aside.
  EXPECT_GT(batch / batch_runs, 20 * afternoon / afternoon_runs)
      << "batch " << batch / batch_runs << " afternoon " << afternoon / afternoon_runs;
}

TEST(FleetShapesTest, BurstsAreSortedDisjointAndWithinTheirBounds) {
  const DiurnalShape shape;
  const int64_t to_ms = kEpochDayMs + 30 * kDayMs;
  const std::vector<StealBurst> bursts = DrawStealBursts(5, kEpochDayMs, to_ms, shape);
  // One every 4 hours on average: 180 in 30 days.
  EXPECT_GT(bursts.size(), 120u);
  EXPECT_LT(bursts.size(), 240u);
  std::set<int64_t> hours;
  for (size_t i = 0; i < bursts.size(); ++i) {
    const StealBurst& b = bursts[i];
    EXPECT_GE(b.start_ms, kEpochDayMs);
    EXPECT_LT(b.start_ms, to_ms);
    EXPECT_GE(b.end_ms - b.start_ms, 2 * kMinuteMs - 1) << "burst " << i;
    EXPECT_LE(b.end_ms - b.start_ms, kHourMs) << "burst " << i;
    EXPECT_GE(b.level, 0.25 * shape.peak_steal) << "burst " << i;
    EXPECT_LE(b.level, shape.peak_steal) << "burst " << i;
    if (i > 0) {
      EXPECT_GE(b.start_ms, bursts[i - 1].end_ms) << "burst " << i;
    }
    hours.insert(b.start_ms % kDayMs / kHourMs);
  }
  // Independent of the load: at every time of day, not only in the afternoon.
  EXPECT_GE(hours.size(), 20u);
}

TEST(FleetShapesTest, BurstsAreTheOnlySteal) {
  DiurnalShape shape;
  shape.steal = StealShape::kBursts;
  shape.steal_bursts = DrawStealBursts(11, kEpochDayMs, kEpochDayMs + 14 * kDayMs, shape);
  int inside = 0;
  for (const RunRecord& run : Runs(shape, 3, 14)) {
    const double steal = run.conditions->cpu_steal;
    if (BurstAt(shape.steal_bursts, run.start_unix_ms) == nullptr) {
      EXPECT_EQ(steal, 0) << "steal outside a burst at " << run.start_unix_ms;
    } else {
      EXPECT_GT(steal, 0) << "no steal in a burst at " << run.start_unix_ms;
      ++inside;
    }
  }
  EXPECT_GT(inside, 10);  // about one run in 12 falls in a burst
}

TEST(FleetShapesTest, NoStealIsNoneAtAnyHour) {
  DiurnalShape shape;
  shape.steal = StealShape::kNone;
  for (const RunRecord& run : Runs(shape, 3, 3)) {
    EXPECT_EQ(run.conditions->cpu_steal, 0) << "at " << run.start_unix_ms;
    EXPECT_EQ(run.conditions->cpu_wait, 0) << "at " << run.start_unix_ms;
  }
}

TEST(FleetShapesTest, ShapesDrawTheSameNumbersSoOnlyLoadAndStealDiffer) {
  DiurnalShape none;
  none.steal = StealShape::kNone;
  const std::vector<RunRecord> diurnal = Runs(DiurnalShape{}, 9, 2);
  const std::vector<RunRecord> stealless = Runs(none, 9, 2);
  ASSERT_EQ(diurnal.size(), stealless.size());
  for (size_t i = 0; i < diurnal.size(); ++i) {
    EXPECT_EQ(ForeignLoad(diurnal[i]), ForeignLoad(stealless[i])) << "run " << i;
  }
}

TEST(FleetShapesTest, SameSeedSameBurstsAnotherSeedOthers) {
  const DiurnalShape shape;
  const auto draw = [&](uint64_t seed) {
    return DrawStealBursts(seed, kEpochDayMs, kEpochDayMs + 3 * kDayMs, shape);
  };
  const auto starts = [](const std::vector<StealBurst>& bursts) {
    std::vector<int64_t> out;
    for (const StealBurst& b : bursts) out.push_back(b.start_ms);
    return out;
  };
  EXPECT_EQ(starts(draw(1)), starts(draw(1)));
  EXPECT_NE(starts(draw(1)), starts(draw(2)));
}

FleetSpec Spec(uint64_t seed, LoadShape load, StealShape steal) {
  FleetSpec spec;
  spec.hosts = 10;
  spec.days = 5;
  spec.seed = seed;
  spec.end_ms = kEpochDayMs + 30 * kDayMs;
  spec.load = load;
  spec.steal = steal;
  return spec;
}

TEST(FleetShapesTest, FleetBurstsComeFromTheSeedEachHostItsOwn) {
  const Fleet a = MakeFleet(Spec(29, LoadShape::kNight, StealShape::kBursts));
  const Fleet b = MakeFleet(Spec(29, LoadShape::kNight, StealShape::kBursts));
  const Fleet other = MakeFleet(Spec(30, LoadShape::kNight, StealShape::kBursts));
  ASSERT_EQ(a.hosts.size(), 10u);
  for (size_t h = 0; h < a.hosts.size(); ++h) {
    const std::vector<StealBurst>& bursts = a.hosts[h].steal_bursts;
    EXPECT_FALSE(bursts.empty()) << "host " << h;
    EXPECT_EQ(a.hosts[h].load, LoadShape::kNight);
    ASSERT_EQ(bursts.size(), b.hosts[h].steal_bursts.size()) << "host " << h;
    for (size_t i = 0; i < bursts.size(); ++i) {
      EXPECT_EQ(bursts[i].start_ms, b.hosts[h].steal_bursts[i].start_ms);
      EXPECT_EQ(bursts[i].level, b.hosts[h].steal_bursts[i].level);
    }
    EXPECT_GE(bursts.front().start_ms, a.start_ms) << "host " << h;
    EXPECT_LT(bursts.back().start_ms, a.spec.end_ms) << "host " << h;
    if (h > 0) {
      EXPECT_NE(bursts.front().start_ms, a.hosts[h - 1].steal_bursts.front().start_ms);
    }
    EXPECT_NE(bursts.front().start_ms, other.hosts[h].steal_bursts.front().start_ms);
  }
}

TEST(FleetShapesTest, ShapesLeaveTheSeedsDisksAndFaultsAsTheDefaultFleets) {
  const Fleet base = MakeFleet(Spec(29, LoadShape::kAfternoon, StealShape::kDiurnal));
  const Fleet shaped = MakeFleet(Spec(29, LoadShape::kNight, StealShape::kBursts));
  ASSERT_EQ(base.disks.size(), shaped.disks.size());
  for (size_t i = 0; i < base.disks.size(); ++i) {
    const DiskSpec &x = base.disks[i], &y = shaped.disks[i];
    EXPECT_EQ(x.seed, y.seed) << "disk " << i;
    EXPECT_EQ(x.speed, y.speed) << "disk " << i;
    EXPECT_EQ(x.fault.kind, y.fault.kind) << "disk " << i;
    EXPECT_EQ(x.fault.start_ms, y.fault.start_ms) << "disk " << i;
  }
  for (size_t h = 0; h < base.hosts.size(); ++h) {
    EXPECT_EQ(base.hosts[h].peak_load, shaped.hosts[h].peak_load) << "host " << h;
    EXPECT_EQ(base.hosts[h].peak_steal, shaped.hosts[h].peak_steal) << "host " << h;
    EXPECT_TRUE(base.hosts[h].steal_bursts.empty()) << "host " << h;
  }
}

}  // namespace
}  // namespace iowatch::fleet
