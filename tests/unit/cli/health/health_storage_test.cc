// `iowatch health` run whole (RunHealth) on fixture trees with the storage
// stack below the disks: an NVMe controller named on its namespace's story,
// one not live a problem (exit 1), a dead one without namespaces a story of
// its own (tests/fixtures/nvme-states); each ZFS pool a story, not ONLINE a
// problem (node_exporter's pools); each multipath map's paths on its dm
// device, a path not running a problem and a map down to one usable path a
// warning (tests/fixtures/multipath); the JSON carries all three.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/health/health_command.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

struct StackHealthRan {
  int status = 0;
  std::string out;
};

StackHealthRan HealthOn(const std::filesystem::path& root, std::vector<std::string> more = {}) {
  iowatch::testing::TempDir state;
  EXPECT_TRUE(state.ok());
  std::vector<std::string> args = {"--no-smart", "--state.dir", state.File("state")};
  args.insert(args.end(), more.begin(), more.end());
  ::testing::internal::CaptureStdout();
  StackHealthRan ran;
  ran.status = RunHealth(GlobalOptions{(root / "proc").string(), (root / "sys").string()}, args);
  ran.out = ::testing::internal::GetCapturedStdout();
  return ran;
}

void ExpectLines(const StackHealthRan& ran, const std::vector<std::string>& lines) {
  for (const std::string& line : lines) {
    EXPECT_NE(ran.out.find(line), std::string::npos) << line << "\n" << ran.out;
  }
}

void CopyTree(const std::filesystem::path& from, const std::filesystem::path& to) {
  std::filesystem::create_directories(to);
  std::filesystem::copy(
      from, to,
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
}

// A host whose NVMe controllers are `fixture`'s sys/class/nvme and whose one
// block device is the namespace `disk` (259:0), in sysfs and diskstats.
void NvmeHost(const std::filesystem::path& root, const std::string& fixture,
              const std::string& disk) {
  CopyTree(iowatch::testing::FixturesDir() + "/" + fixture + "/sys/class", root / "sys/class");
  std::filesystem::create_directories(root / "proc");
  std::filesystem::create_directories(root / "sys/block" / disk);
  std::ofstream(root / "sys/block" / disk / "dev") << "259:0\n";
  std::ofstream(root / "proc/diskstats") << " 259       0 " << disk << " 0 0 0 0 0 0 0 0 0 0 0\n";
}

const std::filesystem::path kNodeExporter = iowatch::testing::FixturesDir() + "/node-exporter";
const std::filesystem::path kMultipath = iowatch::testing::FixturesDir() + "/multipath";

TEST(HealthNvme, ALiveControllerIsNamedOnItsNamespacesStory) {
  iowatch::testing::TempDir root;
  ASSERT_TRUE(root.ok());
  NvmeHost(root.path(), "node-exporter", "nvme0n1");
  const StackHealthRan ran = HealthOn(root.path());
  EXPECT_EQ(ran.status, 0) << ran.out;
  ExpectLines(ran, {"nvme0n1  ",
                    "  controller   nvme0: Samsung SSD 970 PRO 512GB, firmware 1B2QEXP7, live\n",
                    "  problems     none\n", "1 disk(s), 0 problem(s)\n"});
}

TEST(HealthNvme, AControllerNotLiveIsAProblemOfItsDiskOrOfItsOwnStory) {
  iowatch::testing::TempDir root;
  ASSERT_TRUE(root.ok());
  NvmeHost(root.path(), "nvme-states", "nvme1n1");
  const StackHealthRan ran = HealthOn(root.path());
  EXPECT_EQ(ran.status, 1) << ran.out;
  ExpectLines(ran, {
                       "  controller   nvme1: INTEL SSDPE2KX020T8, firmware VDV10184, resetting\n",
                       "  PROBLEM      NVMe controller nvme1 resetting: no I/O until it is live "
                       "again\n",
                       // No namespace left: the controller is a story of its own.
                       "nvme2  0.0 GB  nvme  WUS5EA138ESP7E3  FIXTURE00DEAD000002\n",
                       "  controller   nvme2: WUS5EA138ESP7E3, firmware RC610004, dead\n",
                       "  PROBLEM      NVMe controller nvme2 dead: the driver gave it up after a "
                       "failed reset: no I/O\n",
                       "  PROBLEM      NVMe controller nvme3 deleting (no IO): being removed: no "
                       "I/O\n",
                   });
  EXPECT_EQ(ran.out.find("nvme1  "), std::string::npos) << "nvme1 is told on nvme1n1\n" << ran.out;
}

TEST(HealthZfs, EachPoolIsAStoryAndNotOnlineIsAProblem) {
  // node_exporter's pools: pool1 and pool3 ONLINE, pool2 SUSPENDED, poolz1 DEGRADED.
  const StackHealthRan ran = HealthOn(kNodeExporter);
  EXPECT_EQ(ran.status, 1) << ran.out;
  ExpectLines(ran, {
                       "pool1  zfs pool\n  state        ONLINE\n  problems     none\n",
                       "pool2  zfs pool\n  state        SUSPENDED\n  PROBLEM      ZFS pool pool2 "
                       "SUSPENDED: I/O suspended after device failures (zpool clear)\n",
                       "poolz1  zfs pool\n  state        DEGRADED\n  PROBLEM      ZFS pool poolz1 "
                       "DEGRADED: a device failed or is missing, its redundancy is reduced\n",
                       " 4 ZFS pool(s), ",
                   });
}

TEST(HealthZfs, AnOnlinePoolNamedByDashDExitsZero) {
  const StackHealthRan ran = HealthOn(kNodeExporter, {"-d", "pool1"});
  EXPECT_EQ(ran.status, 0) << ran.out;
  EXPECT_NE(ran.out.find("0 disk(s), 1 ZFS pool(s), 0 problem(s)\n"), std::string::npos) << ran.out;
  const StackHealthRan degraded = HealthOn(kNodeExporter, {"-d", "poolz1"});
  EXPECT_EQ(degraded.status, 1) << degraded.out;
}

TEST(HealthMultipath, APathNotRunningIsAProblemOfItsMap) {
  // mpatha (dm-0): sdb and sdc running; mpathb (dm-1): its one path sdd offline.
  const StackHealthRan ran =
      HealthOn(kMultipath, {"--path.udev.data", (kMultipath / "udev/data").string()});
  EXPECT_EQ(ran.status, 1) << ran.out;
  ExpectLines(ran, {
                       "  multipath    mpatha: 2 of 2 path(s) usable: sdb running, sdc running\n",
                       "  multipath    mpathb: 0 of 1 path(s) usable: sdd offline\n",
                       "  PROBLEM      multipath mpathb: path sdd offline: it carries no I/O\n",
                       "  PROBLEM      multipath mpathb: no usable path: its I/O queues or fails\n",
                   });
  EXPECT_EQ(ran.out.find("multipath mpatha:"), std::string::npos) << ran.out;
}

TEST(HealthMultipath, AMapDownToOnePathIsAWarningNotAProblem) {
  iowatch::testing::TempDir root;
  ASSERT_TRUE(root.ok());
  CopyTree(kMultipath, root.path());
  std::ofstream(root.path() / "sys/block/sdd/device/state") << "running\n";
  const StackHealthRan ran =
      HealthOn(root.path(), {"--path.udev.data", root.File("udev/data"), "-d", "dm-1"});
  EXPECT_EQ(ran.status, 0) << ran.out;
  ExpectLines(ran, {"  multipath    mpathb: 1 of 1 path(s) usable: sdd running\n",
                    "  WARNING      multipath mpathb: down to one usable path of 1: one more "
                    "failure stops its I/O\n",
                    "  problems     none\n"});

  std::ofstream(root.path() / "sys/block/sdc/device/state") << "transport-offline\n";
  const StackHealthRan failed =
      HealthOn(root.path(), {"--path.udev.data", root.File("udev/data"), "-d", "dm-0"});
  EXPECT_EQ(failed.status, 1) << failed.out;
  ExpectLines(failed,
              {"  multipath    mpatha: 1 of 2 path(s) usable: sdb running, sdc transport-offline\n",
               "  WARNING      multipath mpatha: down to one usable path of 2: one more failure "
               "stops its I/O\n",
               "  PROBLEM      multipath mpatha: path sdc transport-offline: it carries no I/O\n"});
}

TEST(HealthStorageStack, TheJsonCarriesControllersPoolsAndMaps) {
  iowatch::testing::TempDir root;
  ASSERT_TRUE(root.ok());
  NvmeHost(root.path(), "node-exporter", "nvme0n1");
  CopyTree(kNodeExporter / "proc/spl", root.path() / "proc/spl");
  const StackHealthRan ran = HealthOn(root.path(), {"-o", "json"});
  EXPECT_EQ(ran.status, 1) << ran.out;
  const auto doc = nlohmann::json::parse(ran.out);
  bool nvme_seen = false;
  for (const auto& disk : doc["disks"]) {
    if (disk["device"] != "nvme0n1") continue;
    nvme_seen = true;
    EXPECT_EQ(disk["nvme_controller"]["controller"], "nvme0");
    EXPECT_EQ(disk["nvme_controller"]["state"], "live");
    EXPECT_EQ(disk["nvme_controller"]["firmware"], "1B2QEXP7");
    EXPECT_EQ(disk["nvme_controller"]["namespaces"], nlohmann::json::array({"nvme0n1"}));
  }
  EXPECT_TRUE(nvme_seen) << ran.out;
  ASSERT_EQ(doc["zfs_pools"].size(), 4u) << ran.out;
  EXPECT_EQ(doc["zfs_pools"][1]["pool"], "pool2");
  EXPECT_EQ(doc["zfs_pools"][1]["state"], "SUSPENDED");
  EXPECT_EQ(doc["zfs_pools"][1]["problems"].size(), 1u);

  const StackHealthRan maps =
      HealthOn(kMultipath, {"-o", "json", "--path.udev.data", (kMultipath / "udev/data").string()});
  const auto mdoc = nlohmann::json::parse(maps.out);
  bool map_seen = false;
  for (const auto& disk : mdoc["disks"]) {
    if (disk["device"] != "dm-1") continue;
    map_seen = true;
    EXPECT_EQ(disk["multipath"]["name"], "mpathb");
    EXPECT_EQ(disk["multipath"]["usable_paths"], 0);
    EXPECT_EQ(disk["multipath"]["paths"][0]["path"], "sdd");
    EXPECT_EQ(disk["multipath"]["paths"][0]["state"], "offline");
    EXPECT_EQ(disk["problems"].size(), 2u);
  }
  EXPECT_TRUE(map_seen) << maps.out;
}

}  // namespace
}  // namespace iowatch::daemon
