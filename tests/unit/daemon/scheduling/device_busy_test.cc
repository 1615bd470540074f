// DeviceBusyTracker on synthetic io_ticks series: utilisation, coverage,
// u32 wrap, implausible jumps, window trimming and excluded probe spans.
#include "daemon/scheduling/device_busy.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/daemon/scheduling/test_devices.h"

namespace iowatch::daemon {
namespace {

using testing::kNvme;
using testing::kSda;

// Feeds one sample per second over [from_s, to_s], the device busy
// `fraction` of each second; returns the counter after the last sample.
uint64_t Feed(DeviceBusyTracker& tracker, DeviceId device, double from_s, double to_s,
              double fraction, uint64_t ticks_ms) {
  for (double t = from_s; t <= to_s; t += 1) {
    tracker.Record(t, device, ticks_ms);
    ticks_ms += static_cast<uint64_t>(fraction * 1000);
  }
  return ticks_ms - static_cast<uint64_t>(fraction * 1000);
}

TEST(DeviceBusy, FormatsDevicesAsMajorMinor) {
  EXPECT_EQ(FormatDevice(kSda), "8:0");
  EXPECT_EQ(FormatDevice(kNvme), "259:1");
  EXPECT_EQ(FormatDevice(MakeDeviceId(253, 1048575)), "253:1048575");
}

TEST(DeviceBusy, UtilizationIsTheShareOfTimeWithIoInFlight) {
  DeviceBusyTracker tracker(60);
  tracker.Watch(kSda);
  Feed(tracker, kSda, 0, 60, 0.3, 1000);
  const auto u = tracker.Utilization(kSda, 60, 60, {});
  ASSERT_TRUE(u.has_value());
  EXPECT_NEAR(*u, 0.3, 1e-9);
  // A shorter window looks at the latest samples only.
  Feed(tracker, kSda, 61, 70, 0.9, 1000 + 60 * 300 + 900);
  EXPECT_NEAR(*tracker.Utilization(kSda, 10, 70, {}), 0.9, 1e-9);
}

TEST(DeviceBusy, OnlyWatchedDevicesAreKept) {
  DeviceBusyTracker tracker(60);
  Feed(tracker, kNvme, 0, 60, 0.5, 0);
  EXPECT_EQ(tracker.IntervalCount(kNvme), 0u);
  EXPECT_FALSE(tracker.Utilization(kNvme, 60, 60, {}).has_value());
  tracker.Watch(kNvme);
  tracker.Watch(kNvme);  // idempotent
  Feed(tracker, kNvme, 61, 70, 0.5, 0);
  EXPECT_EQ(tracker.IntervalCount(kNvme), 9u);
}

TEST(DeviceBusy, UnknownUntilHalfTheWindowHasSamples) {
  DeviceBusyTracker tracker(60);
  tracker.Watch(kSda);
  Feed(tracker, kSda, 0, 29, 0.2, 0);  // 29 s of intervals
  EXPECT_FALSE(tracker.Utilization(kSda, 60, 29, {}).has_value());
  Feed(tracker, kSda, 30, 30, 0.2, 30 * 200);  // 30 s: exactly half
  ASSERT_TRUE(tracker.Utilization(kSda, 60, 30, {}).has_value());
  EXPECT_NEAR(*tracker.Utilization(kSda, 60, 30, {}), 0.2, 1e-9);
  // Samples that stopped long ago say nothing about now.
  EXPECT_FALSE(tracker.Utilization(kSda, 60, 200, {}).has_value());
}

TEST(DeviceBusy, TicksWrapAt32Bits) {
  DeviceBusyTracker tracker(60);
  tracker.Watch(kSda);
  const uint64_t start = (uint64_t{1} << 32) - 10'500;  // wraps after ~26 s at 400 ms/s
  uint64_t ticks = start;
  for (int t = 0; t <= 60; ++t) {
    tracker.Record(t, kSda, ticks & 0xffffffffu);  // the kernel prints %u
    ticks += 400;
  }
  ASSERT_EQ(tracker.IntervalCount(kSda), 60u);
  EXPECT_NEAR(*tracker.Utilization(kSda, 60, 60, {}), 0.4, 1e-9);
}

TEST(DeviceBusy, WideCountersAreSubtractedAsIs) {
  DeviceBusyTracker tracker(60);
  tracker.Watch(kSda);
  Feed(tracker, kSda, 0, 60, 0.5, uint64_t{5} << 32);
  EXPECT_NEAR(*tracker.Utilization(kSda, 60, 60, {}), 0.5, 1e-9);
}

TEST(DeviceBusy, ImpossibleJumpsAreDroppedNotCountedAsBusy) {
  DeviceBusyTracker tracker(60);
  tracker.Watch(kSda);
  Feed(tracker, kSda, 0, 40, 0.1, 1'000'000);
  tracker.Record(41, kSda, 100);  // removed and re-added: fresh counters
  Feed(tracker, kSda, 42, 60, 0.1, 200);
  EXPECT_EQ(tracker.IntervalCount(kSda), 59u);  // 41→42 was 100 ms busy: kept; 40→41 dropped
  EXPECT_NEAR(*tracker.Utilization(kSda, 60, 60, {}), 0.1, 1e-9);
  // Slightly more ticks than wall time (clock skew) is 100 % busy, not more.
  tracker.Record(61, kSda, 200 + 18 * 100 + 1200);
  EXPECT_LE(*tracker.Utilization(kSda, 1, 61, {}), 1.0);
  EXPECT_NEAR(*tracker.Utilization(kSda, 1, 61, {}), 1.0, 1e-9);
}

TEST(DeviceBusy, KeepsOnlyTheWindowOfSamples) {
  DeviceBusyTracker tracker(60);
  tracker.Watch(kSda);
  Feed(tracker, kSda, 0, 3600, 0.25, 0);
  EXPECT_EQ(tracker.IntervalCount(kSda), 60u);
  EXPECT_NEAR(*tracker.Utilization(kSda, 60, 3600, {}), 0.25, 1e-9);
  // Asking for more than is kept: only 60 s of 600 are known.
  EXPECT_FALSE(tracker.Utilization(kSda, 600, 3600, {}).has_value());
}

TEST(DeviceBusy, PartialIntervalsAtTheWindowStartCountByTheirShare) {
  DeviceBusyTracker tracker(60);
  tracker.Watch(kSda);
  tracker.Record(0, kSda, 0);
  tracker.Record(10, kSda, 0);       // idle
  tracker.Record(20, kSda, 10'000);  // fully busy
  // Window [5, 20]: half of the idle interval and all of the busy one.
  EXPECT_NEAR(*tracker.Utilization(kSda, 15, 20, {}), 10.0 / 15, 1e-9);
}

TEST(DeviceBusy, TimeGoingBackwardsRestartsTheSeries) {
  DeviceBusyTracker tracker(60);
  tracker.Watch(kSda);
  Feed(tracker, kSda, 100, 160, 0.5, 0);
  tracker.Record(160, kSda, 99'999);  // the same time again: ignored
  EXPECT_EQ(tracker.IntervalCount(kSda), 60u);
  tracker.Record(10, kSda, 0);
  EXPECT_EQ(tracker.IntervalCount(kSda), 0u);
  Feed(tracker, kSda, 11, 50, 0.1, 100);
  EXPECT_NEAR(*tracker.Utilization(kSda, 60, 50, {}), 0.1, 1e-9);
}

// The pitfall of DESIGN.md §6: a probe makes its device 100 % busy; the
// next busy check must see only the load around it.
TEST(DeviceBusy, ExcludedSpansDoNotCountAsLoad) {
  DeviceBusyTracker tracker(60);
  tracker.Watch(kSda);
  uint64_t ticks = Feed(tracker, kSda, 0, 60, 0.1, 0);
  ticks = Feed(tracker, kSda, 61, 80, 1.0, ticks + 1000);  // our probe, 60.x..80
  Feed(tracker, kSda, 81, 90, 0.1, ticks + 100);
  const std::vector<TimeSpan> probe = {{60.5, 80.2}};
  const auto with_probe = tracker.Utilization(kSda, 60, 90, {});
  const auto without_probe = tracker.Utilization(kSda, 60, 90, probe);
  ASSERT_TRUE(with_probe && without_probe);
  EXPECT_GT(*with_probe, 0.35);
  EXPECT_NEAR(*without_probe, 0.1, 1e-9);
  // Every interval overlapping the span goes, whole: [60, 61] ... [80, 81].
  // Left: [30, 60] and [81, 90], 39 s of 60: still known.
  const std::vector<TimeSpan> long_probe = {{35, 80.2}};
  EXPECT_FALSE(tracker.Utilization(kSda, 60, 90, long_probe).has_value());
}

}  // namespace
}  // namespace iowatch::daemon
