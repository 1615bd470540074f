// The cgroup scan on fixture trees of both hierarchies: which one counts I/O,
// the walk's depth, the filter, the cap on cgroup x device pairs, v1's
// recursive files and their fallback, v2's pressure, and files that are
// malformed (skipped, named) or vanished (silent).
#include "collectors/cgroup/cgroup_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/unit/source_tree.h"

namespace iowatch::collectors {
namespace {

const std::string kV2 = iowatch::testing::FixturesDir() + "/cgroup-v2";
const std::string kV1 = iowatch::testing::FixturesDir() + "/cgroup-v1";

std::vector<std::string> Paths(const CgroupIoScan& scan) {
  std::vector<std::string> paths;
  for (const CgroupIo& c : scan.cgroups) paths.push_back(c.path);
  return paths;
}

const CgroupIo& Find(const CgroupIoScan& scan, std::string_view path) {
  const auto found = std::ranges::find(scan.cgroups, path, &CgroupIo::path);
  EXPECT_NE(found, scan.cgroups.end()) << path;
  return *found;
}

CgroupIoScan Scan(const std::string& dir, CgroupSelection selection = {}) {
  const FileTree sysfs(dir + "/sys");
  const auto layout = DetectCgroupLayout(FileTree(dir + "/proc"), sysfs);
  EXPECT_TRUE(layout) << layout.error().ToString();
  return layout ? ScanCgroupIo(sysfs, *layout, selection) : CgroupIoScan{};
}

TEST(DetectCgroupLayout, V2WhenTheUnifiedRootHasTheIoControllerElseV1Blkio) {
  const auto v2 = DetectCgroupLayout(FileTree(kV2 + "/proc"), FileTree(kV2 + "/sys"));
  ASSERT_TRUE(v2) << v2.error().ToString();
  EXPECT_EQ(v2->version, CgroupVersion::kV2);
  EXPECT_EQ(v2->io_root, "fs/cgroup");
  EXPECT_EQ(v2->psi_root, "fs/cgroup");
  const auto v1 = DetectCgroupLayout(FileTree(kV1 + "/proc"), FileTree(kV1 + "/sys"));
  ASSERT_TRUE(v1) << v1.error().ToString();
  EXPECT_EQ(v1->version, CgroupVersion::kV1);
  EXPECT_EQ(v1->io_root, "fs/cgroup/blkio");
  EXPECT_EQ(v1->psi_root, "fs/cgroup/unified");
  const auto none = DetectCgroupLayout(FileTree(kV2 + "/proc"), FileTree("/nonexistent"));
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().ToString().find("no cgroup hierarchy counting block I/O"),
            std::string::npos);
}

TEST(ScanCgroupIo, V2DownToTheDepthWithUnitsPressureAndEveryDevice) {
  const CgroupIoScan scan = Scan(kV2);
  EXPECT_EQ(Paths(scan),
            (std::vector<std::string>{
                "init.scope", "system.slice", "system.slice/fstrim.service",
                "system.slice/idle.service", "system.slice/postgresql.service",
                "system.slice/system-getty.slice", "user.slice", "user.slice/user-1000.slice"}));
  const CgroupIo& pg = Find(scan, "system.slice/postgresql.service");
  EXPECT_EQ(pg.unit, "postgresql.service");
  ASSERT_EQ(pg.devices.size(), 1u);
  EXPECT_EQ(pg.devices[0],
            (CgroupDeviceIo{8, 0, 209715200, 100663296, 3200, 1536, 0, 0, {1234, {}, {}, {}, {}}}));
  ASSERT_TRUE(pg.pressure);
  EXPECT_EQ(pg.pressure->some.total_us, 1100000u);
  EXPECT_EQ(Find(scan, "system.slice").devices.size(), 2u);  // 8:32 vanished: kept here
  EXPECT_EQ(Find(scan, "system.slice/fstrim.service").devices[0].discard_bytes, 1073741824u);
  EXPECT_TRUE(Find(scan, "system.slice/idle.service").devices.empty());
  EXPECT_FALSE(Find(scan, "user.slice").pressure);  // no io.pressure in the tree
  EXPECT_EQ(scan.dropped_pairs, 0u);
  EXPECT_TRUE(scan.skipped.empty());
}

TEST(ScanCgroupIo, DeeperWalksReachEscapedUnitNames) {
  const CgroupIoScan scan =
      Scan(kV2, {.max_depth = 3, .filter = {}, .max_pairs = 2000, .device_wanted = {}});
  const CgroupIo& getty = Find(scan, "system.slice/system-getty.slice/getty\\x2dtty1.service");
  EXPECT_EQ(getty.unit, "getty\\x2dtty1.service");
  EXPECT_EQ(getty.devices[0].write_bytes, 4194304u);
}

TEST(ScanCgroupIo, TheFilterMatchesWholePathsAndTheCapCountsWhatItDrops) {
  const CgroupIoScan services =
      Scan(kV2, {.max_depth = 2,
                 .filter = *DeviceFilter::Create(R"(system\.slice/.*\.service)", ""),
                 .max_pairs = 2000,
                 .device_wanted = {}});
  EXPECT_EQ(Paths(services),
            (std::vector<std::string>{"system.slice/fstrim.service", "system.slice/idle.service",
                                      "system.slice/postgresql.service"}));
  // init.scope has no device, system.slice two: a cap of 2 keeps system.slice's
  // and drops every later pair (fstrim, postgresql, getty, user.slice x2).
  const CgroupIoScan capped =
      Scan(kV2, {.max_depth = 2, .filter = {}, .max_pairs = 2, .device_wanted = {}});
  EXPECT_EQ(capped.dropped_pairs, 5u);
  EXPECT_EQ(Find(capped, "system.slice").devices.size(), 2u);
  EXPECT_TRUE(Find(capped, "system.slice/postgresql.service").devices.empty());
  // Devices the iostat series leave out (8:32 here) neither show nor count.
  const CgroupIoScan sda_only = Scan(kV2, {.max_depth = 2,
                                           .filter = {},
                                           .max_pairs = 2,
                                           .device_wanted = [](uint32_t major, uint32_t minor) {
                                             return major == 8 && minor == 0;
                                           }});
  EXPECT_EQ(sda_only.dropped_pairs, 4u);
  EXPECT_EQ(Find(sda_only, "system.slice").devices.size(), 1u);
  EXPECT_EQ(Find(sda_only, "system.slice/fstrim.service").devices.size(), 1u);
}

TEST(ScanCgroupIo, V1ReadsRecursiveFilesFallsBackToFlatAndTakesPressureFromV2) {
  const CgroupIoScan scan = Scan(kV1);
  EXPECT_EQ(Paths(scan), (std::vector<std::string>{"system.slice", "system.slice/fio-load.service",
                                                   "system.slice/sshd.service", "user.slice"}));
  const CgroupIo& load = Find(scan, "system.slice/fio-load.service");
  ASSERT_EQ(load.devices.size(), 1u);
  EXPECT_EQ(load.devices[0], (CgroupDeviceIo{254, 0, 67108864, 0, 16384, 0, 0, 0, {}}));
  ASSERT_TRUE(load.pressure);
  EXPECT_EQ(load.pressure->full->total_us, 300000u);
  EXPECT_EQ(Find(scan, "system.slice").devices[0].read_bytes, 67108864u);  // recursive
  EXPECT_TRUE(Find(scan, "system.slice/sshd.service").devices.empty());
  EXPECT_TRUE(Find(scan, "user.slice").devices.empty());  // flat: Total 0
}

TEST(ScanCgroupIo, AMalformedFileSkipsItsCgroupAndIsNamed) {
  std::string pattern = "/tmp/iowatch-cgroup-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::filesystem::path root = pattern;
  std::filesystem::copy(kV2, root, std::filesystem::copy_options::recursive);
  std::ofstream(root / "sys/fs/cgroup/user.slice/io.stat") << "8:0 rbytes=12x\n";
  std::ofstream(root / "sys/fs/cgroup/system.slice/io.pressure") << "some avg10=x\n";
  const CgroupIoScan scan = Scan(root.string());
  std::filesystem::remove_all(root);
  EXPECT_EQ(std::ranges::count(Paths(scan), "user.slice"), 0);
  ASSERT_EQ(scan.skipped.size(), 2u);
  EXPECT_NE(scan.skipped[0].ToString().find("system.slice/io.pressure:1"), std::string::npos)
      << scan.skipped[0].ToString();
  EXPECT_NE(scan.skipped[1].ToString().find("user.slice/io.stat:1: expected"), std::string::npos)
      << scan.skipped[1].ToString();
  EXPECT_FALSE(Find(scan, "system.slice").pressure);
}

}  // namespace
}  // namespace iowatch::collectors
