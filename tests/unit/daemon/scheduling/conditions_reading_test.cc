// The run's conditions: what the disk did besides the probe, from two
// readings of its counters, and the readings themselves from a fixture tree.
#include "daemon/scheduling/conditions_reading.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/sysmacros.h>

#include <filesystem>
#include <fstream>

namespace iowatch::daemon {
namespace {

collectors::DiskCounters Disk(uint64_t reads, uint64_t read_sectors, uint64_t read_ms,
                              uint64_t io_ms) {
  collectors::DiskCounters d;
  d.reads = reads;
  d.read_sectors = read_sectors;
  d.read_ms = read_ms;
  d.io_ms = io_ms;
  d.field_count = 17;
  return d;
}

// A probe that did `ios` reads of `bs` bytes, each taking `lat_us`.
probes::ProbeResult Own(uint64_t ios, uint64_t bs, double lat_us) {
  probes::ProbeResult r;
  r.spec.block_size = bs;
  r.read.ios = ios;
  r.read.bytes = ios * bs;
  for (uint64_t i = 0; i < ios; ++i) r.read.lat.Add(static_cast<uint64_t>(lat_us * 1000));
  return r;
}

ConditionsReading Reading(double t, collectors::DiskCounters disk) {
  ConditionsReading r;
  r.monotonic_seconds = t;
  r.disk = disk;
  return r;
}

TEST(RunConditions, AQuietDiskDidOnlyTheProbesIo) {
  // 1,000 reads of 4 KiB at 500 µs: 8,000 sectors, 500 ms of request time.
  const auto c = ComputeRunConditions(Reading(10, Disk(100, 800, 50, 40)),
                                      Reading(12, Disk(1100, 8800, 550, 1040)),
                                      Own(1000, 4096, 500), 1 << 20, false);
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->seconds, 2);
  EXPECT_EQ(c->ForeignIos(), 0u);
  EXPECT_EQ(c->ForeignBytes(), 0u);
  EXPECT_DOUBLE_EQ(c->ForeignShare(), 0);
  EXPECT_DOUBLE_EQ(c->Utilisation(), 0.5);
  EXPECT_FALSE(c->io_pressure_some);
}

TEST(RunConditions, ForeignRequestsAndTheirShareOfTheDevicesTime) {
  // The device did 1,500 requests and 1,500 ms of request time: the probe's
  // 1,000 took 500 ms, someone else's 500 took 1,000 ms.
  const auto c = ComputeRunConditions(Reading(0, Disk(0, 0, 0, 0)),
                                      Reading(2, Disk(1500, 8000 + 4000, 1500, 1800)),
                                      Own(1000, 4096, 500), 1 << 20, true);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->ForeignIos(), 500u);
  EXPECT_DOUBLE_EQ(c->ForeignIops(), 250);
  EXPECT_EQ(c->ForeignBytes(), 4000u * 512);
  // Weighted 1 + bytes / 64 KiB: others 500 + 2,048,000 / 65,536 = 531.25,
  // the probe 1000 + 4,096,000 / 65,536 = 1062.5.
  EXPECT_NEAR(c->ForeignShare(), 531.25 / (531.25 + 1062.5), 1e-9);
  EXPECT_TRUE(c->other_probe);
}

TEST(RunConditions, LargeIosAreCountedAsTheRequestsTheQueueSplitsThemInto) {
  // 100 reads of 1 MiB on a queue of 512 KiB requests: 200 requests.
  const auto c =
      ComputeRunConditions(Reading(0, Disk(0, 0, 0, 0)), Reading(1, Disk(200, 204800, 100, 900)),
                           Own(100, 1 << 20, 1000), 512 * 1024, false);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->own_requests, 200u);
  EXPECT_EQ(c->ForeignIos(), 0u);
}

TEST(RunConditions, RequestsWithoutForeignBytesAreTheProbesOwnSplitsNotOthers) {
  // 100 reads of 1 MiB that the disk counted as 300 requests (split by its
  // segment limits, not by max_sectors_kb): no byte was anyone else's, so
  // neither were the 100 extra requests.
  const auto c =
      ComputeRunConditions(Reading(0, Disk(0, 0, 0, 0)), Reading(1, Disk(300, 204800, 100, 900)),
                           Own(100, 1 << 20, 1000), 1 << 20, false);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->ForeignIos(), 0u);
  EXPECT_DOUBLE_EQ(c->ForeignShare(), 0);
  // With 8 KiB of others' bytes, at most two of them were others' requests.
  const auto d = ComputeRunConditions(Reading(0, Disk(0, 0, 0, 0)),
                                      Reading(1, Disk(300, 204800 + 16, 100, 900)),
                                      Own(100, 1 << 20, 1000), 1 << 20, false);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->ForeignIos(), 2u);
}

TEST(RunConditions, PressureAndStealOverTheSpan) {
  ConditionsReading before = Reading(0, Disk(0, 0, 0, 0));
  ConditionsReading after = Reading(2, Disk(0, 0, 0, 0));
  before.io_pressure = collectors::Pressure{{0, 0, 0, 1'000'000}, {{0, 0, 0, 500'000}}};
  after.io_pressure = collectors::Pressure{{0, 0, 0, 1'500'000}, {{0, 0, 0, 600'000}}};
  before.cpu = collectors::CpuTicks{.user = 100, .idle = 100};
  after.cpu = collectors::CpuTicks{.user = 200, .idle = 160, .steal = 40};  // 200 more, 40 stolen
  const auto c = ComputeRunConditions(before, after, Own(0, 4096, 0), 0, false);
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(*c->io_pressure_some, 0.25);
  EXPECT_DOUBLE_EQ(*c->io_pressure_full, 0.05);
  EXPECT_DOUBLE_EQ(c->cpu_steal, 0.2);
}

TEST(RunConditions, NothingWithoutTheDiskOrWhenItsCountersWentBackwards) {
  const auto own = Own(10, 4096, 100);
  ConditionsReading no_disk;
  no_disk.monotonic_seconds = 1;
  EXPECT_FALSE(ComputeRunConditions(no_disk, Reading(2, Disk(1, 1, 1, 1)), own, 0, false));
  EXPECT_FALSE(ComputeRunConditions(Reading(0, Disk(50, 8, 1, 1)), Reading(1, Disk(10, 8, 1, 1)),
                                    own, 0, false));
  EXPECT_FALSE(ComputeRunConditions(Reading(1, Disk(1, 1, 1, 1)), Reading(1, Disk(2, 2, 2, 2)), own,
                                    0, false));
}

TEST(RunConditions, TheTickFieldsWrapAt32Bits) {
  const auto c =
      ComputeRunConditions(Reading(0, Disk(0, 0, 4294967000, 4294967000)),
                           Reading(1, Disk(10, 80, 204, 704)), Own(10, 4096, 50'000), 0, false);
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->device_io_seconds, 0.5);
  EXPECT_DOUBLE_EQ(c->device_busy_seconds, 1.0);
}

TEST(LoadWindow, EveryRequestInTheWindowBeforeTheRunIsOthers) {
  // 1 s, 2,000 reads of 16 KiB (64,000 sectors), busy 300 ms.
  const auto w =
      ComputeLoadWindow(Reading(5, Disk(100, 800, 0, 10)), Reading(6, Disk(2100, 64800, 0, 310)));
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->seconds, 1);
  EXPECT_EQ(w->device_ios, 2000u);
  EXPECT_EQ(w->device_bytes, 2000u * 16384);
  EXPECT_DOUBLE_EQ(w->device_busy_seconds, 0.3);
  EXPECT_DOUBLE_EQ(w->Iops(), 2000);
  EXPECT_DOUBLE_EQ(w->BytesPerSecond(), 2000.0 * 16384);
  // Requests that moved less than 4 KiB each count one per 4 KiB.
  const auto tiny = ComputeLoadWindow(Reading(0, Disk(0, 0, 0, 0)), Reading(1, Disk(100, 8, 0, 1)));
  ASSERT_TRUE(tiny);
  EXPECT_EQ(tiny->Ios(), 1u);
  // As for a run: no disk, no time, or counters that went backwards: none.
  ConditionsReading no_disk;
  no_disk.monotonic_seconds = 1;
  EXPECT_FALSE(ComputeLoadWindow(no_disk, Reading(2, Disk(1, 1, 1, 1))));
  EXPECT_FALSE(ComputeLoadWindow(Reading(1, Disk(1, 1, 1, 1)), Reading(1, Disk(2, 2, 2, 2))));
  EXPECT_FALSE(ComputeLoadWindow(Reading(0, Disk(50, 8, 1, 1)), Reading(1, Disk(10, 8, 1, 1))));
}

TEST(ReadConditions, TheWholeDisksStatPressureAndCpuFromTheTrees) {
  std::string pattern = "/tmp/iowatch-conditions-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path root = pattern;
  std::filesystem::create_directories(root / "sys/dev/block/8:0/queue");
  std::filesystem::create_directories(root / "proc/pressure");
  std::ofstream(root / "sys/dev/block/8:0/stat")
      << "     100        0     800       50        0        0        0        0        0       "
         "40       50        0        0        0        0        0        0\n";
  std::ofstream(root / "sys/dev/block/8:0/queue/max_sectors_kb") << "1280\n";
  std::ofstream(root / "proc/pressure/io") << "some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n"
                                              "full avg10=0.00 avg60=0.00 avg300=0.00 total=7\n";
  std::ofstream(root / "proc/stat") << "cpu  1 2 3 4 5 6 7 8 0 0\n";
  const FileTree procfs(root / "proc");
  const FileTree sysfs(root / "sys");
  const ConditionsReading r = ReadConditions(procfs, sysfs, makedev(8, 0));
  ASSERT_TRUE(r.disk);
  EXPECT_EQ(r.disk->reads, 100u);
  EXPECT_EQ(r.disk->io_ms, 40u);
  ASSERT_TRUE(r.io_pressure);
  EXPECT_EQ(r.io_pressure->some.total_us, 42u);
  ASSERT_TRUE(r.cpu);
  EXPECT_EQ(r.cpu->steal, 8u);
  EXPECT_EQ(MaxRequestBytes(sysfs, makedev(8, 0)), 1280u * 1024);
  EXPECT_EQ(MaxRequestBytes(sysfs, makedev(8, 16)), 0u);
  EXPECT_FALSE(ReadConditions(procfs, sysfs, makedev(8, 16)).disk);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace iowatch::daemon
