// The fleet simulation's passive windows (passive_timeline.h) through the
// daemon's PassiveJudge: an abrupt fault's step is raised within minutes
// and published at the next scrape, healthy disks are never raised, and a
// window a probe ran in is left unjudged.
#include "tests/bench/fleet/passive_timeline.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/bench/fleet/fleet_layout.h"

namespace iowatch::fleet {
namespace {

constexpr int64_t kEndMs = 20'010 * kDayMs;                            // a midnight (UTC) in 2024
constexpr PassiveNoise kNoise{.sigma_dev = 0.10, .request_cv = 0.45};  // the quiet recording's

// Ten hosts (two of each model) for four days; one abrupt fault (40 %
// lost), no gradual one; the firmware model's hosts updated on day 3.
Fleet SmallFleet() {
  FleetSpec spec;
  spec.hosts = 10;
  spec.days = 4;
  spec.end_ms = kEndMs;
  spec.gradual = 0;
  spec.abrupt = 1;
  spec.abrupt_min = spec.abrupt_max = 0.40;
  return MakeFleet(spec);
}

DiskTimeline Passive(const Fleet& fleet, const DiskSpec& disk, const std::vector<RunSpan>& runs) {
  DiskTimeline t;
  t.scrapes.resize(static_cast<size_t>((fleet.spec.end_ms - fleet.start_ms) / kIntervalMs) + 1);
  SimulatePassive(fleet, disk, kNoise, kMinuteMs, runs, t);
  return t;
}

TEST(PassiveTimeline, AnAbruptStepIsRaisedWithinMinutesAndNoHealthyDisk) {
  const Fleet fleet = SmallFleet();
  int faults = 0;
  size_t windows = 0;
  size_t judged = 0;
  for (const DiskSpec& disk : fleet.disks) {
    const DiskTimeline t = Passive(fleet, disk, {});
    EXPECT_EQ(t.counts.passive.healthy_raises, 0u) << InstanceOf(disk.host) << " " << disk.slot;
    windows += t.counts.passive.windows;
    judged += t.counts.passive.judged;
    EXPECT_FALSE(t.scrapes[0].passive_series);  // nothing before its first window
    if (disk.fault.kind != FaultKind::kAbrupt) continue;
    ++faults;
    const int64_t raised = t.counts.passive.first_raise_ms;
    ASSERT_GE(raised, disk.fault.start_ms);
    EXPECT_LE(raised - disk.fault.start_ms, 30 * kMinuteMs);
    // The next scrape publishes it, with its ratio.
    const auto next = static_cast<size_t>((raised - fleet.start_ms) / kIntervalMs + 1);
    ASSERT_LT(next, t.scrapes.size());
    EXPECT_TRUE(t.scrapes[next].passive_regressed);
    EXPECT_GT(t.scrapes[next].passive_ratio, 1.2f);
  }
  EXPECT_EQ(faults, 1);
  // Quiet nights (fewer than 50 requests) and loads beyond what a model
  // covered are not judged; most minutes are.
  EXPECT_GT(judged, windows / 2);
}

// A window a probe ran in is the daemon's "probe" window: counted, not judged.
TEST(PassiveTimeline, AWindowWithAProbeRunIsNotJudged) {
  const Fleet fleet = SmallFleet();
  const DiskSpec& disk = fleet.disks.front();
  const DiskTimeline free = Passive(fleet, disk, {});
  std::vector<RunSpan> runs;
  for (int64_t at = fleet.start_ms + 5'000; at < fleet.spec.end_ms; at += kIntervalMs) {
    runs.emplace_back(at, at + 3'000);
  }
  const DiskTimeline probed = Passive(fleet, disk, runs);
  EXPECT_EQ(probed.counts.passive.windows, free.counts.passive.windows);
  const size_t lost = free.counts.passive.judged - probed.counts.passive.judged;
  // One window in 15 (fewer: some were not judged anyway).
  EXPECT_GT(lost, free.counts.passive.judged / 20);
  // A probe's minute is not learned either: where it would have widened the
  // model's cover, a later minute may stay outside it, a few in a hundred.
  EXPECT_LE(lost, runs.size() + runs.size() / 50);
}

}  // namespace
}  // namespace iowatch::fleet
