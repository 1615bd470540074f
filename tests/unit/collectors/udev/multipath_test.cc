// ReadMultipathMap on the hand-made multipath tree (tests/fixtures/multipath):
// a map with two running paths, one with an offline path; a path without a
// SCSI state, a removed map, an unreadable state.
#include "collectors/udev/multipath.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::collectors {
namespace {

const FileTree kMultipathSysfs(iowatch::testing::FixturesDir() + "/multipath/sys");

TEST(Multipath, MapWithTwoRunningPaths) {
  const auto map = ReadMultipathMap(kMultipathSysfs, "dm-0", "mpatha");
  ASSERT_TRUE(map) << map.error().ToString();
  EXPECT_EQ(*map, (MultipathMap{.device = "dm-0",
                                .name = "mpatha",
                                .paths = {{"sdb", "running"}, {"sdc", "running"}}}));
}

TEST(Multipath, MapWithOneOfflinePath) {
  const auto map = ReadMultipathMap(kMultipathSysfs, "dm-1", "mpathb");
  ASSERT_TRUE(map) << map.error().ToString();
  EXPECT_EQ(map->paths, (std::vector<MultipathPath>{{"sdd", "offline"}}));
}

TEST(Multipath, OnlyMpathUuidsAreMaps) {
  EXPECT_TRUE(IsMultipathUuid("mpath-360014051f4e2d3a8c6b94b1d9a5c7e21"));
  EXPECT_FALSE(
      IsMultipathUuid("LVM-Xq3vWn8KpL2mZr5TtYc7HdFg9JbNs4Ue1aOi6PkVyRxC0wQzEuM3lDhB7fGjSt2n"));
  EXPECT_FALSE(IsMultipathUuid("part1-mpath-3600140"));  // kpartx's partition of a map
  EXPECT_FALSE(IsMultipathUuid(""));
}

TEST(Multipath, PathWithoutAScsiStateIsUnknownAndARemovedMapNotFound) {
  // dm-2 (LVM) sits on dm-0, which has no device/state.
  const auto stacked = ReadMultipathMap(kMultipathSysfs, "dm-2", "data-db");
  ASSERT_TRUE(stacked) << stacked.error().ToString();
  EXPECT_EQ(stacked->paths, (std::vector<MultipathPath>{{"dm-0", "unknown"}}));
  const auto gone = ReadMultipathMap(kMultipathSysfs, "dm-9", "mpathz");
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
}

TEST(Multipath, UnreadableStateNamesItsFileAndStatesAreLabelSafe) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "block/dm-0/slaves/sda");
  std::filesystem::create_directories(dir.path() / "block/dm-0/slaves/sdb");
  std::filesystem::create_directories(dir.path() / "block/sda/device/state");  // a directory
  std::filesystem::create_directories(dir.path() / "block/sdb/device");
  std::ofstream(dir.path() / "block/sdb/device/state") << "  transport-offline\x01\n";
  const FileTree sysfs(dir.path());
  const auto failed = ReadMultipathMap(sysfs, "dm-0", "mpatha");
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().ToString().find(dir.File("block/sda/device/state")), std::string::npos)
      << failed.error().ToString();
  std::filesystem::remove(dir.path() / "block/dm-0/slaves/sda");
  const auto map = ReadMultipathMap(sysfs, "dm-0", "mpatha");
  ASSERT_TRUE(map) << map.error().ToString();
  EXPECT_EQ(map->paths, (std::vector<MultipathPath>{{"sdb", "transport-offline "}}));
}

}  // namespace
}  // namespace iowatch::collectors
