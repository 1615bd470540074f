#include "daemon/passive/passive_feed.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace iowatch::daemon {
namespace {

using probes::PassiveSource;
using probes::PassiveWindow;

// A disk that completes `reads` reads of 8 sectors (4 KiB) each taking
// `read_ms_each` ms, and as many writes of 16 sectors, per second.
struct Disk {
  uint64_t reads_per_second = 100;
  uint64_t read_ms_per_second = 50;  // 0.5 ms a read
  uint64_t writes_per_second = 20;
  uint64_t write_ms_per_second = 40;  // 2 ms a write
  uint64_t read_ms_start = 0;
};

// The sample at second `t` (wall clock from 1,000,000 s, monotonic from 10 s).
Snapshot At(const Disk& disk, uint64_t t, uint64_t steal_per_second = 0) {
  Snapshot s;
  s.timestamp_seconds = 1'000'000.0 + static_cast<double>(t);
  s.monotonic_seconds = 10.0 + static_cast<double>(t);
  DeviceSnapshot d;
  d.name = "sda";
  d.counters.reads = disk.reads_per_second * t;
  d.counters.read_sectors = 8 * disk.reads_per_second * t;
  d.counters.read_ms = (disk.read_ms_start + disk.read_ms_per_second * t) & 0xffffffffu;
  d.counters.writes = disk.writes_per_second * t;
  d.counters.write_sectors = 16 * disk.writes_per_second * t;
  d.counters.write_ms = disk.write_ms_per_second * t;
  d.counters.io_ms = 600 * t;            // busy 60 %
  d.counters.weighted_io_ms = 1500 * t;  // 1.5 requests in the queue on average
  d.counters.field_count = 17;
  s.devices.push_back(d);
  collectors::ProcStat stat;
  stat.total.idle = 200 * t - steal_per_second * t;  // two CPUs at 100 Hz
  stat.total.steal = steal_per_second * t;
  s.stat = stat;
  return s;
}

std::vector<PassiveWindow> Feed(PassiveFeed& feed, const Disk& disk, std::vector<uint64_t> times,
                                const std::vector<std::string>& probing = {}) {
  std::vector<PassiveWindow> out;
  for (uint64_t t : times) {
    for (PassiveWindow& w : feed.Add(At(disk, t, 20), probing)) out.push_back(std::move(w));
  }
  return out;
}

std::vector<uint64_t> Seconds(uint64_t from, uint64_t to) {
  std::vector<uint64_t> out;
  for (uint64_t t = from; t <= to; ++t) out.push_back(t);
  return out;
}

// The wall clock starts at 1,000,000 s = 16,666 minutes and 40 s: the first
// window closes at the sample of 20 s, the next at 80 s.
TEST(PassiveFeed, AWindowIsTheCountersGrowthBetweenItsEnds) {
  PassiveFeed feed;
  const Disk disk;
  const std::vector<PassiveWindow> windows = Feed(feed, disk, Seconds(0, 80));
  ASSERT_EQ(windows.size(), 4u);  // two windows x read, write
  const PassiveWindow& read = windows[0];
  EXPECT_EQ(read.device, "sda");
  EXPECT_EQ(read.op, "read");
  EXPECT_EQ(read.size, "all");
  EXPECT_EQ(read.source, PassiveSource::kDiskstats);
  EXPECT_EQ(read.start_ms, 1'000'000'000);
  EXPECT_EQ(read.end_ms, 1'000'020'000);
  EXPECT_EQ(read.requests, 2000u);
  EXPECT_DOUBLE_EQ(read.mean_seconds, 0.0005);
  EXPECT_DOUBLE_EQ(read.rate, 100);
  EXPECT_DOUBLE_EQ(read.mean_bytes, 4096);
  EXPECT_DOUBLE_EQ(read.other_bytes_rate, 20 * 8192);
  EXPECT_DOUBLE_EQ(read.steal, 0.1);
  EXPECT_DOUBLE_EQ(read.utilization, 0.6);
  EXPECT_DOUBLE_EQ(read.queue_depth, 1.5);
  EXPECT_FALSE(read.probe);
  EXPECT_FALSE(read.counters_reset);
  const PassiveWindow& write = windows[1];
  EXPECT_EQ(write.op, "write");
  EXPECT_DOUBLE_EQ(write.mean_seconds, 0.002);
  EXPECT_DOUBLE_EQ(write.mean_bytes, 8192);
  EXPECT_DOUBLE_EQ(write.other_bytes_rate, 100 * 4096);
  // The next window is a whole minute, from the sample that closed the first.
  EXPECT_EQ(windows[2].start_ms, 1'000'020'000);
  EXPECT_EQ(windows[2].end_ms, 1'000'080'000);
  EXPECT_EQ(windows[2].requests, 6000u);
}

// Samples lost across a boundary make one window longer; no request is lost.
TEST(PassiveFeed, ALostSampleLosesNoRequest) {
  PassiveFeed feed;
  const Disk disk;
  std::vector<uint64_t> times = Seconds(0, 15);
  for (uint64_t t = 25; t <= 200; t += 7) times.push_back(t);  // 16..24 lost, then every 7 s
  uint64_t requests = 0;
  int64_t last_end = 0;
  for (const PassiveWindow& w : Feed(feed, disk, times)) {
    if (w.op != "read") continue;
    if (last_end != 0) {
      EXPECT_EQ(w.start_ms, last_end) << "windows are contiguous";
    }
    last_end = w.end_ms;
    requests += w.requests;
    EXPECT_DOUBLE_EQ(w.mean_seconds, 0.0005);
    EXPECT_DOUBLE_EQ(w.rate, 100);
  }
  EXPECT_EQ(requests, 100u * static_cast<uint64_t>(last_end / 1000 - 1'000'000));
}

// The kernel's milliseconds are 32-bit: a window across the wrap is exact.
TEST(PassiveFeed, ATickWrapIsAGrowthNotAReset) {
  PassiveFeed feed;
  Disk disk;
  disk.read_ms_start = 0xffffffffu - 500;  // wraps 10 s in
  const std::vector<PassiveWindow> windows = Feed(feed, disk, Seconds(0, 20));
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_FALSE(windows[0].counters_reset);
  EXPECT_DOUBLE_EQ(windows[0].mean_seconds, 0.0005);
}

// A probe of iowatch's on the disk in any sample of the window marks it;
// the next window starts clean.
TEST(PassiveFeed, AProbeOnTheDiskMarksItsWindow) {
  PassiveFeed feed;
  const Disk disk;
  std::vector<PassiveWindow> windows = Feed(feed, disk, Seconds(0, 9));
  const std::vector<PassiveWindow> probed = Feed(feed, disk, {10}, {"sdb", "sda"});
  windows = Feed(feed, disk, Seconds(11, 80));
  ASSERT_EQ(windows.size(), 4u);
  EXPECT_TRUE(windows[0].probe);
  EXPECT_TRUE(windows[1].probe);
  EXPECT_FALSE(windows[2].probe);
}

// Counters that went backwards (the disk removed and added again) say
// nothing about the window: it is marked, with no figures.
TEST(PassiveFeed, CountersThatWentBackwardsMarkTheWindow) {
  PassiveFeed feed;
  Disk disk;
  std::vector<PassiveWindow> windows;
  for (uint64_t t = 0; t <= 30; ++t) {
    Snapshot s = At(disk, t);
    if (t < 15) s.devices[0].counters = At(disk, t + 1000).devices[0].counters;
    for (PassiveWindow& w : feed.Add(s, {})) windows.push_back(std::move(w));
  }
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_TRUE(windows[0].counters_reset);
  EXPECT_EQ(windows[0].requests, 0u);
}

// The BPF collector's device stage of reads by size class at second `t`:
// per second 60 small reads (4 KiB, 0.2 ms), 30 medium (64 KiB, 0.5 ms) and
// 10 large (256 KiB, 2 ms), counted from `t0`.
BlockClassSeries MixedReads(uint64_t t, uint64_t t0 = 0) {
  BlockClassSeries c;
  c.device = "sda";
  c.op = collectors::bpf::BlockOp::kRead;
  const uint64_t per_second[3] = {60, 30, 10};
  const uint64_t bytes[3] = {4096, 65536, 262144};
  const uint64_t ns[3] = {200'000, 500'000, 2'000'000};
  for (size_t i = 0; i < 3; ++i) {
    const uint64_t n = per_second[i] * (t - t0);
    c.classes[i] = {n, n * ns[i], n * bytes[i]};
  }
  return c;
}

// With the BPF collector's device stage for the disk, the windows are its,
// one per size class: each class's own time per request, without the
// scheduler's queue, and its own sizes (a mean over the mix would move
// with the mix).
TEST(PassiveFeed, TheDeviceStageBySizeClassIsPreferredWhereTheCollectorHasIt) {
  for (const bool shadow : {false, true}) {
    PassiveFeed feed(PassiveFeedOptions{.window_ms = 60'000, .shadow_diskstats = shadow});
    const Disk disk;
    std::vector<PassiveWindow> windows;
    for (uint64_t t = 0; t <= 20; ++t) {
      Snapshot s = At(disk, t);
      s.block_io.device_classes.push_back(MixedReads(t));
      for (PassiveWindow& w : feed.Add(s, {})) windows.push_back(std::move(w));
    }
    ASSERT_EQ(windows.size(), shadow ? 5u : 4u) << shadow;
    const char* sizes[3] = {"small", "medium", "large"};
    const uint64_t requests[3] = {1200, 600, 200};
    const double mean_seconds[3] = {0.0002, 0.0005, 0.002};
    const double mean_bytes[3] = {4096, 65536, 262144};
    for (size_t i = 0; i < 3; ++i) {
      const PassiveWindow& w = windows[i];
      EXPECT_EQ(w.op, "read");
      EXPECT_EQ(w.size, sizes[i]);
      EXPECT_EQ(w.source, PassiveSource::kDevice);
      EXPECT_EQ(w.requests, requests[i]) << sizes[i];
      EXPECT_DOUBLE_EQ(w.mean_seconds, mean_seconds[i]) << sizes[i];
      EXPECT_DOUBLE_EQ(w.mean_bytes, mean_bytes[i]) << sizes[i];
      EXPECT_DOUBLE_EQ(w.rate, static_cast<double>(requests[i]) / 20) << sizes[i];
      // The disk's other op, writes: 20 a second of 8 KiB (diskstats).
      EXPECT_DOUBLE_EQ(w.other_bytes_rate, 20 * 8192) << sizes[i];
      EXPECT_DOUBLE_EQ(w.utilization, 0.6) << sizes[i];
    }
    if (shadow) {
      EXPECT_EQ(windows[3].source, PassiveSource::kDiskstats);
      EXPECT_EQ(windows[3].size, "all");
      EXPECT_DOUBLE_EQ(windows[3].mean_seconds, 0.0005);
    }
    EXPECT_EQ(windows.back().op, "write");  // no device stage for writes here
    EXPECT_EQ(windows.back().size, "all");
    EXPECT_EQ(windows.back().source, PassiveSource::kDiskstats);
  }
}

// A class without requests in the window is still one: judged as idle,
// not left out.
TEST(PassiveFeed, AClassWithoutRequestsHasAnEmptyWindow) {
  PassiveFeed feed;
  std::vector<PassiveWindow> windows;
  for (uint64_t t = 0; t <= 20; ++t) {
    Snapshot s = At(Disk{}, t);
    BlockClassSeries reads = MixedReads(t);
    reads.classes[2] = {};  // no large reads
    s.block_io.device_classes.push_back(reads);
    for (PassiveWindow& w : feed.Add(s, {})) windows.push_back(std::move(w));
  }
  ASSERT_EQ(windows.size(), 4u);
  EXPECT_EQ(windows[2].size, "large");
  EXPECT_EQ(windows[2].source, PassiveSource::kDevice);
  EXPECT_EQ(windows[2].requests, 0u);
  EXPECT_DOUBLE_EQ(windows[2].mean_seconds, 0);
  EXPECT_DOUBLE_EQ(windows[2].rate, 0);
}

// The program reloaded between the window's ends: its counters restarted,
// so the window is diskstats'.
TEST(PassiveFeed, ADeviceStageThatRestartedLeavesTheWindowToDiskstats) {
  PassiveFeed feed;
  std::vector<PassiveWindow> windows;
  for (uint64_t t = 0; t <= 80; ++t) {
    Snapshot s = At(Disk{}, t);
    s.block_io.device_classes.push_back(t < 75 ? MixedReads(t) : MixedReads(t, 74));
    for (PassiveWindow& w : feed.Add(s, {})) windows.push_back(std::move(w));
  }
  ASSERT_EQ(windows.size(), 6u);  // the first window's 3 classes and writes, then 2
  EXPECT_EQ(windows[3].op, "write");
  EXPECT_EQ(windows[4].op, "read");
  EXPECT_EQ(windows[4].size, "all");
  EXPECT_EQ(windows[4].source, PassiveSource::kDiskstats);
  EXPECT_EQ(windows[4].requests, 6000u);
}

}  // namespace
}  // namespace iowatch::daemon
