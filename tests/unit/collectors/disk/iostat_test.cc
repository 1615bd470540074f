// The iostat formulas on two hand-made samples, one expectation per column,
// plus the cases that must never produce negative or absurd rates.
#include "collectors/disk/iostat.h"

#include <gtest/gtest.h>

namespace iowatch::collectors {
namespace {

DiskCounters Counters(std::initializer_list<uint64_t> values) {
  std::vector<uint64_t> v(values);
  v.resize(17, 0);
  DiskCounters c;
  c.reads = v[0], c.reads_merged = v[1], c.read_sectors = v[2], c.read_ms = v[3];
  c.writes = v[4], c.writes_merged = v[5], c.write_sectors = v[6], c.write_ms = v[7];
  c.in_flight = v[8], c.io_ms = v[9], c.weighted_io_ms = v[10];
  c.discards = v[11], c.discards_merged = v[12], c.discard_sectors = v[13], c.discard_ms = v[14];
  c.flushes = v[15], c.flush_ms = v[16];
  c.field_count = 17;
  return c;
}

// Over 2 s (200 cs): 150 reads of 8 sectors merged 30 times taking 600 ms, ...
const DiskCounters kPrev = Counters(
    {1000, 200, 80000, 5000, 2000, 500, 160000, 12000, 1, 9000, 17000, 100, 0, 40000, 300, 50, 60});
const DiskCounters kCur = Counters({1150, 230, 92000, 5600, 2300, 560, 184000, 13500, 2, 10500,
                                    19900, 110, 0, 44096, 330, 60, 75});

TEST(ComputeIostat, EveryColumnOverAnInterval) {
  const IostatRow r = ComputeIostat(kPrev, kCur, 200);
  EXPECT_FALSE(r.counters_reset);
  EXPECT_DOUBLE_EQ(r.reads_per_s, 75);           // 150 / 2 s
  EXPECT_DOUBLE_EQ(r.read_sectors_per_s, 6000);  // rkB/s 3000
  EXPECT_DOUBLE_EQ(r.read_merges_per_s, 15);     // rrqm/s
  EXPECT_NEAR(r.read_merge_pct, 100.0 * 30 / 180, 1e-12);
  EXPECT_DOUBLE_EQ(r.read_await_ms, 4);          // 600 ms / 150
  EXPECT_DOUBLE_EQ(r.read_request_sectors, 80);  // rareq-sz 40 kB
  EXPECT_DOUBLE_EQ(r.writes_per_s, 150);
  EXPECT_DOUBLE_EQ(r.write_sectors_per_s, 12000);
  EXPECT_DOUBLE_EQ(r.write_merges_per_s, 30);
  EXPECT_DOUBLE_EQ(r.write_await_ms, 5);
  EXPECT_DOUBLE_EQ(r.write_request_sectors, 80);
  EXPECT_DOUBLE_EQ(r.discards_per_s, 5);
  EXPECT_DOUBLE_EQ(r.discard_sectors_per_s, 2048);
  EXPECT_DOUBLE_EQ(r.discard_merge_pct, 0);
  EXPECT_DOUBLE_EQ(r.discard_await_ms, 3);
  EXPECT_DOUBLE_EQ(r.discard_request_sectors, 409.6);
  EXPECT_DOUBLE_EQ(r.flushes_per_s, 5);
  EXPECT_DOUBLE_EQ(r.flush_await_ms, 1.5);
  EXPECT_DOUBLE_EQ(r.transfers_per_s, 230);  // reads + writes + discards, not flushes
  EXPECT_DOUBLE_EQ(r.queue_size, 1.45);      // 2900 ms weighted / 2000 ms
  EXPECT_DOUBLE_EQ(r.util_pct, 75);          // 1500 ms busy of 2000
  EXPECT_EQ(r.read_sectors, 12000u);
  EXPECT_EQ(r.write_sectors, 24000u);
  EXPECT_EQ(r.discard_sectors, 4096u);
}

TEST(ComputeIostat, IdleDeviceIsAllZeroNotNaN) {
  const IostatRow r = ComputeIostat(kCur, kCur, 100);
  EXPECT_EQ(r.read_await_ms, 0);
  EXPECT_EQ(r.read_request_sectors, 0);
  EXPECT_EQ(r.read_merge_pct, 0);
  EXPECT_EQ(r.util_pct, 0);
}

TEST(ComputeIostat, ThirtyTwoBitTickWrapGivesTheTrueDelta) {
  DiskCounters prev = kPrev;
  DiskCounters cur = kCur;
  prev.read_ms = 4294967000;  // the kernel prints these with %u
  cur.read_ms = 304;          // 600 ms later
  prev.io_ms = 4294967295;
  cur.io_ms = 1499;  // 1500 ms later
  const IostatRow r = ComputeIostat(prev, cur, 200);
  EXPECT_DOUBLE_EQ(r.read_await_ms, 4);
  EXPECT_DOUBLE_EQ(r.util_pct, 75);
}

TEST(ComputeIostat, ZeroIntervalIsTakenAsOneCentisecondLikeSysstat) {
  const IostatRow r = ComputeIostat(kPrev, kCur, 0);
  EXPECT_DOUBLE_EQ(r.reads_per_s, 15000);
}

TEST(ComputeIostat, DeviceReaddedWithinTheIntervalIsMeasuredFromZero) {
  // Same name, fresh counters: fewer I/Os, no sector count still growing.
  const DiskCounters fresh = Counters({10, 0, 80, 5, 4, 0, 32, 8, 0, 12, 13});
  const IostatRow r = ComputeIostat(kCur, fresh, 100);
  EXPECT_FALSE(r.counters_reset);
  EXPECT_DOUBLE_EQ(r.reads_per_s, 10);
  EXPECT_DOUBLE_EQ(r.writes_per_s, 4);
  EXPECT_DOUBLE_EQ(r.read_await_ms, 0.5);
  EXPECT_DOUBLE_EQ(r.util_pct, 1.2);  // 12 ms busy in 1 s
}

TEST(ComputeIostat, CountersGoingBackwardsOtherwiseGiveAZeroRowNeverNegative) {
  DiskCounters cur = kCur;
  cur.reads = kPrev.reads - 1;  // reads went back, but writes and sectors kept growing
  const IostatRow r = ComputeIostat(kPrev, cur, 100);
  EXPECT_TRUE(r.counters_reset);
  EXPECT_EQ(r.reads_per_s, 0);
  EXPECT_EQ(r.writes_per_s, 0);
  EXPECT_EQ(r.util_pct, 0);
  EXPECT_EQ(r.read_sectors, 0u);
}

TEST(ComputeIostat, SinceBootReportDividesByUptime) {
  const IostatRow r = ComputeIostat(DiskCounters{}, kPrev, 100000);  // 1000 s
  EXPECT_DOUBLE_EQ(r.reads_per_s, 1);
  EXPECT_DOUBLE_EQ(r.read_sectors_per_s, 80);
  EXPECT_DOUBLE_EQ(r.util_pct, 0.9);
}

TEST(ActivityFilters, FlushOnlyDeviceCountsAsUsedAndActive) {
  DiskCounters flush_only;
  flush_only.flushes = 7;
  EXPECT_FALSE(NeverUsed(flush_only));
  EXPECT_TRUE(NeverUsed(DiskCounters{}));
  EXPECT_TRUE(HadActivity(DiskCounters{}, flush_only));
  EXPECT_FALSE(HadActivity(flush_only, flush_only));
}

TEST(ComputeCpuUsage, SysstatSplitGuestStaysInUser) {
  const CpuTicks prev{10000, 500, 3000, 80000, 1000, 200, 300, 100, 400, 50};
  const CpuTicks cur{10150, 510, 3050, 80150, 1020, 205, 305, 110, 430, 55};
  const CpuUsage u = ComputeCpuUsage(prev, cur);
  // total = 150 + 10 + 50 + 150 + 20 + 5 + 5 + 10 = 400 jiffies, guest not added
  EXPECT_DOUBLE_EQ(u.user, 37.5);
  EXPECT_DOUBLE_EQ(u.nice, 2.5);
  EXPECT_DOUBLE_EQ(u.system, 15);
  EXPECT_DOUBLE_EQ(u.iowait, 5);
  EXPECT_DOUBLE_EQ(u.steal, 2.5);
  EXPECT_DOUBLE_EQ(u.idle, 37.5);
}

TEST(ComputeCpuUsage, BackwardsFieldIsZeroAndNoTicksMeansNoDivisionByZero) {
  const CpuTicks prev{100, 0, 100, 1000, 0, 0, 0, 0, 0, 0};
  CpuTicks cur = prev;
  cur.idle = 900;  // a CPU came back online
  cur.user = 300;
  const CpuUsage u = ComputeCpuUsage(prev, cur);
  EXPECT_EQ(u.idle, 0);
  EXPECT_GE(u.user, 0);
  const CpuUsage same = ComputeCpuUsage(prev, prev);
  EXPECT_EQ(same.user, 0);
  EXPECT_EQ(same.idle, 0);
}

}  // namespace
}  // namespace iowatch::collectors
