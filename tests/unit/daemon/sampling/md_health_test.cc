// Each md array's health from a snapshot: mdstat and sysfs joined by name,
// degraded, failed members and inactive arrays as problems, an IMSM
// container's inactivity not one.
#include "daemon/sampling/md_health.h"

#include <gtest/gtest.h>

namespace iowatch::daemon {
namespace {

collectors::MdArray MdstatArray(std::string name, bool active) {
  collectors::MdArray a;
  a.name = std::move(name);
  a.active = active;
  return a;
}

collectors::MdSysfsArray SysfsArray(std::string name, std::string level, std::string state) {
  collectors::MdSysfsArray a;
  a.name = std::move(name);
  a.level = std::move(level);
  a.array_state = std::move(state);
  return a;
}

TEST(MdHealth, AContainerIsInactiveByNatureAnArrayThatDidNotStartIsAProblem) {
  Snapshot s;
  s.md.arrays = {MdstatArray("md127", false), MdstatArray("md4", false)};
  s.md.sysfs_arrays = {SysfsArray("md127", "", "inactive"), SysfsArray("md4", "raid1", "inactive")};
  const std::vector<MdArrayHealth> arrays = BuildMdHealth(s);
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].name, "md127");
  EXPECT_TRUE(arrays[0].container);
  EXPECT_TRUE(arrays[0].problems.empty());
  EXPECT_EQ(arrays[1].name, "md4");
  ASSERT_EQ(arrays[1].problems.size(), 1u);
  EXPECT_EQ(arrays[1].problems[0],
            "inactive: the kernel does not run it, nothing on it can be read");
}

TEST(MdHealth, SysfsDegradedWinsAndAnArrayInOneSourceIsJudgedOnWhatItHas) {
  Snapshot s;
  collectors::MdArray md1 = MdstatArray("md1", true);
  md1.level = "raid5";
  md1.raid_disks = 4;
  md1.in_sync_disks = 3;
  md1.members = {{.name = "sda1", .role = 0},
                 {.name = "sdb1", .role = 1, .failed = true},
                 {.name = "sdc1", .role = 4, .spare = true}};
  s.md.arrays = {md1};
  collectors::MdSysfsArray md2 = SysfsArray("md2", "raid1", "clean");
  md2.degraded = 1;
  md2.raid_disks = collectors::MdRaidDisks{2, {}};
  s.md.sysfs_arrays = {md2};
  const std::vector<MdArrayHealth> arrays = BuildMdHealth(s);
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_EQ(arrays[0].degraded, 1u);  // [4/3] without sysfs
  EXPECT_EQ(arrays[0].members, (std::vector<std::string>{"sda1", "sdb1 (failed)", "sdc1 (spare)"}));
  EXPECT_EQ(arrays[0].problems,
            (std::vector<std::string>{"degraded: 1 of 4 raid disks missing or failed",
                                      "member(s) marked failed (F): sdb1"}));
  EXPECT_EQ(DescribeMdState(arrays[0]), "active, degraded: 1 of 4 raid disks missing or failed");
  EXPECT_TRUE(arrays[1].active);
  EXPECT_EQ(DescribeMdState(arrays[1]),
            "active (clean), degraded: 1 of 2 raid disks missing or failed");
  EXPECT_EQ(DescribeMdSync(arrays[1]), "");
}

}  // namespace
}  // namespace iowatch::daemon
