// Device selection across samples: devices that appear, vanish or are filtered.
#include "cli/iostat/iostat_report.h"

#include <gtest/gtest.h>

namespace iowatch::daemon {
namespace {

using collectors::BlockTopology;
using collectors::DiskSample;
using collectors::ParseDiskstats;

DiskSample Sample(uint64_t uptime_cs, const std::string& diskstats) {
  DiskSample sample;
  sample.uptime_cs = uptime_cs;
  sample.diskstats = ParseDiskstats(diskstats, "diskstats");
  return sample;
}

BlockTopology Topology() {
  BlockTopology t;
  t.disks = {"sda", "sdb", "sdc"};
  t.partitions["sda"] = {"sda1"};
  return t;
}

std::vector<std::string> Names(const std::vector<IostatDeviceRow>& rows) {
  std::vector<std::string> names;
  for (const auto& r : rows) names.push_back(r.name);
  return names;
}

TEST(BuildIostatRows, VanishedDevicesDisappearAndNewOnesCountFromZero) {
  const DiskSample prev = Sample(1000,
                                 " 8 0 sda 100 0 800 10 0 0 0 0 0 10 10\n"
                                 " 8 16 sdb 50 0 400 5 0 0 0 0 0 5 5\n");
  const DiskSample cur = Sample(1100,
                                " 8 0 sda 150 0 1200 15 0 0 0 0 0 15 15\n"
                                " 8 32 sdc 7 0 56 1 0 0 0 0 0 1 1\n");
  const auto rows = BuildIostatRows(&prev, cur, Topology(), IostatSelection{});
  ASSERT_EQ(Names(rows), (std::vector<std::string>{"sda", "sdc"}));
  EXPECT_DOUBLE_EQ(rows[0].row.reads_per_s, 50);
  EXPECT_DOUBLE_EQ(rows[1].row.reads_per_s, 7);  // hot-plugged: its counts since it appeared
}

TEST(BuildIostatRows, PartitionsOnlyWhenAskedAndZOmitsIdleDevices) {
  const DiskSample prev = Sample(1000,
                                 " 8 0 sda 100 0 800 10 0 0 0 0 0 10 10\n"
                                 " 8 1 sda1 100 0 800 10 0 0 0 0 0 10 10\n"
                                 " 8 16 sdb 50 0 400 5 0 0 0 0 0 5 5\n");
  const DiskSample cur = Sample(1100,
                                " 8 0 sda 150 0 1200 15 0 0 0 0 0 15 15\n"
                                " 8 1 sda1 150 0 1200 15 0 0 0 0 0 15 15\n"
                                " 8 16 sdb 50 0 400 5 0 0 0 0 0 5 5\n");
  EXPECT_EQ(Names(BuildIostatRows(&prev, cur, Topology(), IostatSelection{})),
            (std::vector<std::string>{"sda", "sdb"}));
  IostatSelection z;
  z.omit_inactive = true;
  EXPECT_EQ(Names(BuildIostatRows(&prev, cur, Topology(), z)), (std::vector<std::string>{"sda"}));
  IostatSelection with_parts;
  with_parts.set = DeviceSet::kPartitionsOfNamed;
  with_parts.names = {"sda"};
  with_parts.hide_never_used = false;
  EXPECT_EQ(Names(BuildIostatRows(&prev, cur, Topology(), with_parts)),
            (std::vector<std::string>{"sda", "sda1"}));
}

}  // namespace
}  // namespace iowatch::daemon
