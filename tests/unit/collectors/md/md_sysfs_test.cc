// ReadMdSysfsArrays on node_exporter's sysfs fixture (its figures against
// every node_md_degraded and node_md_raid_disks line node_exporter exports
// from it), on trees written here in md.c's formats, and on malformed files
// (the path and what was expected).
#include "collectors/md/md_sysfs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/unit/prometheus_samples.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::collectors {
namespace {

using Kind = MdSyncCompleted::Kind;

FileTree MdSysfsFixture() {
  return FileTree(iowatch::testing::FixturesDir() + "/node-exporter/sys");
}

std::vector<MdSysfsArray> MdSysfsFixtureArrays() {
  const auto arrays = ReadMdSysfsArrays(MdSysfsFixture());
  EXPECT_TRUE(arrays) << arrays.error().ToString();
  return arrays ? *arrays : std::vector<MdSysfsArray>{};
}

const MdSysfsArray& MdSysfsArrayNamed(const std::vector<MdSysfsArray>& arrays,
                                      std::string_view name) {
  for (const MdSysfsArray& array : arrays) {
    if (array.name == name) return array;
  }
  static const MdSysfsArray kMissing{.name = "missing"};
  ADD_FAILURE() << name << " not read";
  return kMissing;
}

std::map<std::string, double> MdSysfsComputed(const std::vector<MdSysfsArray>& arrays) {
  std::map<std::string, double> samples;
  for (const MdSysfsArray& array : arrays) {
    const NodeMdSysfsFigures figures = NodeExporterMdSysfsFigures(array);
    const iowatch::testing::SampleLabels labels = {{"device", array.name}};
    samples[iowatch::testing::SampleKey("node_md_degraded", labels)] =
        static_cast<double>(figures.degraded);
    if (figures.raid_disks) {
      samples[iowatch::testing::SampleKey("node_md_raid_disks", labels)] =
          static_cast<double>(*figures.raid_disks);
    }
  }
  return samples;
}

// A tree written here: files under root, each made with its directories.
void WriteMdSysfsFile(const std::filesystem::path& root, const std::string& relative,
                      const std::string& content) {
  const std::filesystem::path path = root / relative;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << content;
}

void WriteMdSysfsRaid1(const std::filesystem::path& root) {
  WriteMdSysfsFile(root, "block/md7/md/array_state", "active\n");
  WriteMdSysfsFile(root, "block/md7/md/level", "raid1\n");
  WriteMdSysfsFile(root, "block/md7/md/raid_disks", "2\n");
  WriteMdSysfsFile(root, "block/md7/md/degraded", "0\n");
  WriteMdSysfsFile(root, "block/md7/md/sync_action", "check\n");
  WriteMdSysfsFile(root, "block/md7/md/sync_completed", "1024 / 4096\n");
  WriteMdSysfsFile(root, "block/md7/md/sync_speed", "183456\n");
  WriteMdSysfsFile(root, "block/md7/md/mismatch_cnt", "128\n");
  WriteMdSysfsFile(root, "block/md7/md/dev-sda1/state", "in_sync,write_mostly\n");
  WriteMdSysfsFile(root, "block/md7/md/dev-sda1/errors", "3\n");
  WriteMdSysfsFile(root, "block/md7/md/dev-sdb1/state", "faulty,blocked,write_error\n");
}

TEST(MdSysfsNodeExporter, FiguresEqualEveryLineOfItsOutput) {
  const auto expected = iowatch::testing::ParsePrometheusSamples(iowatch::testing::ReadFile(
      iowatch::testing::FixturesDir() + "/node-exporter/e2e-output-md-sysfs.txt"));
  ASSERT_EQ(expected.size(), 12u);  // 6 arrays, both figures
  iowatch::testing::ExpectSameSamples(expected, MdSysfsComputed(MdSysfsFixtureArrays()),
                                      "node_exporter");
}

TEST(MdSysfsFixture, ReadsEveryArrayWithAnMdDirectoryByName) {
  std::vector<std::string> names;
  for (const MdSysfsArray& array : MdSysfsFixtureArrays()) names.push_back(array.name);
  EXPECT_EQ(names, (std::vector<std::string>{"md0", "md1", "md10", "md4", "md5", "md6"}));
}

TEST(MdSysfsFixture, Raid0HasNoRedundancyAttributes) {
  const auto arrays = MdSysfsFixtureArrays();
  const MdSysfsArray& md0 = MdSysfsArrayNamed(arrays, "md0");
  EXPECT_EQ(md0.array_state, "clean");
  EXPECT_EQ(md0.level, "raid0");
  EXPECT_EQ(md0.raid_disks, (MdRaidDisks{.count = 2}));
  EXPECT_EQ(md0.chunk_size_bytes, 524288u);
  EXPECT_EQ(md0.degraded, std::nullopt);  // absent, not 0
  EXPECT_EQ(md0.sync_action, std::nullopt);
  EXPECT_EQ(md0.sync_completed, std::nullopt);
  EXPECT_EQ(md0.mismatch_cnt, std::nullopt);
  ASSERT_EQ(md0.members.size(), 2u);
  EXPECT_EQ(md0.members[0].name, "sdg");
  EXPECT_EQ(md0.members[0].state, (std::vector<std::string>{"in_sync"}));
  EXPECT_EQ(md0.members[0].errors, std::nullopt);
  // node_exporter's 0 is procfs's default: it reads degraded only for
  // raid1, 4, 5, 6 and 10.
  EXPECT_EQ(NodeExporterMdSysfsFigures(md0).degraded, 0u);
}

TEST(MdSysfsFixture, IdleArraysSayNone) {
  const auto arrays = MdSysfsFixtureArrays();
  const MdSysfsArray& md1 = MdSysfsArrayNamed(arrays, "md1");
  EXPECT_EQ(md1.level, "raid1");
  EXPECT_EQ(md1.chunk_size_bytes, 0u);
  EXPECT_EQ(md1.degraded, 0u);
  EXPECT_EQ(md1.sync_action, "idle");
  EXPECT_EQ(md1.sync_completed, (MdSyncCompleted{.kind = Kind::kNone}));
}

TEST(MdSysfsFixture, Raid5WithAFaultyMemberAndASpare) {
  const auto arrays = MdSysfsFixtureArrays();
  const MdSysfsArray& md5 = MdSysfsArrayNamed(arrays, "md5");
  EXPECT_EQ(md5.degraded, 1u);
  ASSERT_EQ(md5.members.size(), 4u);
  EXPECT_EQ(md5.members[0].name, "sdaa");
  EXPECT_TRUE(md5.members[0].Has("spare"));
  EXPECT_TRUE(md5.members[1].Has("in_sync"));
  EXPECT_EQ(md5.members[3].name, "sdp");
  EXPECT_TRUE(md5.members[3].Has("faulty"));
  EXPECT_FALSE(md5.members[3].Has("in_sync"));
}

TEST(MdSysfsFixture, RecoveringRaid6) {
  const auto arrays = MdSysfsFixtureArrays();
  const MdSysfsArray& md6 = MdSysfsArrayNamed(arrays, "md6");
  EXPECT_EQ(md6.array_state, "active");
  EXPECT_EQ(md6.level, "raid6");
  EXPECT_EQ(md6.raid_disks, (MdRaidDisks{.count = 4}));
  EXPECT_EQ(md6.sync_action, "recover");
  EXPECT_EQ(
      md6.sync_completed,
      (MdSyncCompleted{.kind = Kind::kRunning, .done_sectors = 1569888, .total_sectors = 2093056}));
  ASSERT_EQ(md6.members.size(), 4u);
  EXPECT_EQ(md6.members[3].name, "sdt");
  EXPECT_EQ(md6.members[3].state, (std::vector<std::string>{"spare"}));
}

TEST(MdSysfsTree, CheckWithSpeedMismatchesFlagsAndErrors) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  WriteMdSysfsRaid1(dir.path());
  const auto arrays = ReadMdSysfsArrays(FileTree(dir.path()));
  ASSERT_TRUE(arrays) << arrays.error().ToString();
  ASSERT_EQ(arrays->size(), 1u);
  const MdSysfsArray& md7 = (*arrays)[0];
  EXPECT_EQ(md7.sync_completed,
            (MdSyncCompleted{.kind = Kind::kRunning, .done_sectors = 1024, .total_sectors = 4096}));
  EXPECT_EQ(md7.sync_speed_kib_per_s, 183456u);
  EXPECT_EQ(md7.mismatch_cnt, 128u);
  ASSERT_EQ(md7.members.size(), 2u);
  EXPECT_EQ(md7.members[0].state, (std::vector<std::string>{"in_sync", "write_mostly"}));
  EXPECT_EQ(md7.members[0].errors, 3u);
  EXPECT_EQ(md7.members[1].state, (std::vector<std::string>{"faulty", "blocked", "write_error"}));
  EXPECT_EQ(md7.members[1].errors, std::nullopt);
}

TEST(MdSysfsTree, ReshapeDelayedSyncAndSpeedNone) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  WriteMdSysfsRaid1(dir.path());
  WriteMdSysfsFile(dir.path(), "block/md7/md/raid_disks", "5 (4)\n");
  WriteMdSysfsFile(dir.path(), "block/md7/md/sync_completed", "delayed\n");
  WriteMdSysfsFile(dir.path(), "block/md7/md/sync_speed", "none\n");
  const auto md7 = ReadMdSysfsArray(FileTree(dir.path()), "md7");
  ASSERT_TRUE(md7) << md7.error().ToString();
  EXPECT_EQ(md7->raid_disks, (MdRaidDisks{.count = 5, .before_reshape = 4}));
  EXPECT_EQ(md7->sync_completed, (MdSyncCompleted{.kind = Kind::kDelayed}));
  EXPECT_EQ(md7->sync_speed_kib_per_s, std::nullopt);
  EXPECT_EQ(NodeExporterMdSysfsFigures(*md7).raid_disks, 5u);  // procfs's first number
}

TEST(MdSysfsTree, ArrayWithoutMdDirectoryIsSkipped) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  WriteMdSysfsRaid1(dir.path());
  WriteMdSysfsFile(dir.path(), "block/md8/dev", "9:8\n");         // md/ not created yet
  WriteMdSysfsFile(dir.path(), "block/sda/md/level", "raid1\n");  // not an md name
  const auto arrays = ReadMdSysfsArrays(FileTree(dir.path()));
  ASSERT_TRUE(arrays) << arrays.error().ToString();
  ASSERT_EQ(arrays->size(), 1u);
  EXPECT_EQ((*arrays)[0].name, "md7");
}

TEST(MdSysfsTree, ReadingAnArrayWithoutMdDirectoryIsNotFound) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  WriteMdSysfsFile(dir.path(), "block/md8/dev", "9:8\n");
  const auto md8 = ReadMdSysfsArray(FileTree(dir.path()), "md8");
  ASSERT_FALSE(md8);
  EXPECT_EQ(md8.error().code, ErrorCode::kNotFound);
  EXPECT_NE(md8.error().ToString().find("block/md8/md"), std::string::npos)
      << md8.error().ToString();
}

TEST(MdSysfsTree, NoBlockDirectoryIsNotFound) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const auto arrays = ReadMdSysfsArrays(FileTree(dir.path()));
  ASSERT_FALSE(arrays);
  EXPECT_EQ(arrays.error().code, ErrorCode::kNotFound);
}

TEST(MdSysfsNodeExporterRules, LevelsDecideWhatProcfsReads) {
  MdSysfsArray array{.level = "raid1", .raid_disks = MdRaidDisks{.count = 2}};
  EXPECT_EQ(NodeExporterMdSysfsFigures(array).degraded, 0u);  // absent: procfs fails, 0 here
  array.degraded = 1;
  EXPECT_EQ(NodeExporterMdSysfsFigures(array).degraded, 1u);
  array.level = "linear";
  EXPECT_EQ(NodeExporterMdSysfsFigures(array).degraded, 0u);  // not read for linear
  EXPECT_EQ(NodeExporterMdSysfsFigures(array).raid_disks, 2u);
  for (const char* level : {"", "container", "imsm", "ddf"}) {
    array.level = level;
    EXPECT_EQ(NodeExporterMdSysfsFigures(array).raid_disks, std::nullopt) << level;
  }
  array.level = std::nullopt;
  EXPECT_EQ(NodeExporterMdSysfsFigures(array).raid_disks, std::nullopt);
  array.level = "raid5";
  array.raid_disks = std::nullopt;  // empty raid_disks
  EXPECT_EQ(NodeExporterMdSysfsFigures(array).raid_disks, std::nullopt);
}

TEST(MdSysfsMalformed, NonNumericRaidDisksNamesThePath) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  WriteMdSysfsRaid1(dir.path());
  WriteMdSysfsFile(dir.path(), "block/md7/md/raid_disks", "two\n");
  const auto arrays = ReadMdSysfsArrays(FileTree(dir.path()));
  ASSERT_FALSE(arrays);
  EXPECT_EQ(arrays.error().code, ErrorCode::kParse);
  EXPECT_EQ(arrays.error().ToString(),
            (dir.path() / "block/md7/md/raid_disks").string() +
                ": expected '<disks>' or '<disks> (<disks before the reshape>)', found 'two'");
}

TEST(MdSysfsMalformed, GarbledSyncCompletedNamesThePath) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  WriteMdSysfsRaid1(dir.path());
  WriteMdSysfsFile(dir.path(), "block/md7/md/sync_completed", "1024 of 4096\n");
  const auto md7 = ReadMdSysfsArray(FileTree(dir.path()), "md7");
  ASSERT_FALSE(md7);
  EXPECT_EQ(md7.error().ToString(),
            (dir.path() / "block/md7/md/sync_completed").string() +
                ": expected 'none', 'delayed' or '<done> / <total>' sectors, found '1024 of 4096'");
}

TEST(MdSysfsMalformed, NonNumericMemberErrorsNamesThePath) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  WriteMdSysfsRaid1(dir.path());
  WriteMdSysfsFile(dir.path(), "block/md7/md/dev-sda1/errors", "-1\n");
  const auto md7 = ReadMdSysfsArray(FileTree(dir.path()), "md7");
  ASSERT_FALSE(md7);
  EXPECT_NE(md7.error().ToString().find("block/md7/md/dev-sda1/errors: expected a decimal number"),
            std::string::npos)
      << md7.error().ToString();
}

}  // namespace
}  // namespace iowatch::collectors
