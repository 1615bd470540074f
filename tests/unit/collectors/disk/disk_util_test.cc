// fio's disk_util from two readings of a disk's counters: the growth of
// each field, ticks across the kernel's 32-bit wrap, util capped at 100 %;
// and the reading by device number from a sysfs tree.
#include "collectors/disk/disk_util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace iowatch::collectors {
namespace {

TEST(DiskUtil, TheGrowthOfEachFieldAsFioNamesIt) {
  DiskCounters before;
  before.reads = 100;
  before.reads_merged = 1;
  before.read_ms = 50;
  before.writes = 10;
  before.writes_merged = 2;
  before.write_ms = 7;
  before.io_ms = 1000;
  before.weighted_io_ms = 4294967290;  // wraps at 2^32
  DiskCounters after = before;
  after.reads = 26567;
  after.write_ms = 20;
  after.writes = 17;
  after.writes_merged = 4;
  after.read_ms = 1000;
  after.io_ms = 1000 + 619;
  after.weighted_io_ms = 965;
  const DiskUtil u = ComputeDiskUtil("vda", before, after, 1000);
  EXPECT_EQ(u, (DiskUtil{"vda", 26467, 7, 0, 2, 950, 13, 971, 61.9}));
  after.io_ms = 1000 + 1500;  // io_ticks outrunning the clock between two readings
  EXPECT_EQ(ComputeDiskUtil("vda", before, after, 1000).util_percent, 100);
  EXPECT_EQ(ComputeDiskUtil("vda", before, after, 0).util_percent, 0);
}

TEST(DiskUtil, ReadsTheDeviceByNumber) {
  std::string pattern = "/tmp/iowatch-disk-util-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path root = pattern;
  std::filesystem::create_directories(root / "dev/block/254:0");
  std::ofstream(root / "dev/block/254:0/stat")
      << "  26467 0 211736 950 7 2 64 13 0 619 971 0 0 0 0 0 0\n";
  const FileTree sysfs(root);
  const auto counters = ReadDeviceCounters(sysfs, 254, 0);
  ASSERT_TRUE(counters) << counters.error().ToString();
  EXPECT_EQ(counters->reads, 26467u);
  EXPECT_EQ(counters->weighted_io_ms, 971u);
  const auto missing = ReadDeviceCounters(sysfs, 8, 0);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().ToString().find("dev/block/8:0/stat"), std::string::npos);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace iowatch::collectors
