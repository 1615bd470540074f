// The md source on node_exporter's fixture tree: every node_md_* line its
// end-to-end test expects (e2e-output-md.txt from /proc/mdstat,
// e2e-output-md-sysfs.txt from sysfs) under iowatch_md_* with the same labels
// and values, and none of those families' series beyond them; the sync's
// speed and time left; and a tree without md, which gives no series and
// collectors that succeed saying what was absent.
#include "daemon/sources/md/md_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "daemon/sources/sampler.h"
#include "tests/unit/daemon/sources/one_source.h"
#include "tests/unit/daemon/sources/test_sampler_options.h"
#include "tests/unit/prometheus_samples.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

const std::string kMdNodeExporterDir = iowatch::testing::FixturesDir() + "/node-exporter";

// The families node_exporter exports too, by our name.
const std::set<std::string> kMdNodeExporterFamilies = {
    "iowatch_md_state",     "iowatch_md_disks",         "iowatch_md_disks_required",
    "iowatch_md_blocks",    "iowatch_md_blocks_synced", "iowatch_md_degraded",
    "iowatch_md_raid_disks"};

// One sample of the md source alone on the two trees.
Snapshot MdCollect(const FileTree& procfs, const FileTree& sysfs) {
  return CollectOneSource(MdSourceDescriptor(), procfs, sysfs);
}

// The md families rendered from a snapshot, as /metrics writes them.
std::string MdRender(const Snapshot& snapshot) {
  return RenderSourceFamilies(AddMdFamilies, snapshot);
}

Snapshot MdFixtureSnapshot() {
  return MdCollect(FileTree(kMdNodeExporterDir + "/proc"), FileTree(kMdNodeExporterDir + "/sys"));
}

// node_exporter's lines renamed node_md_* -> iowatch_md_*.
iowatch::testing::Samples MdExpectedSamples() {
  iowatch::testing::Samples expected;
  for (const char* file : {"/e2e-output-md.txt", "/e2e-output-md-sysfs.txt"}) {
    for (const auto& [key, value] : iowatch::testing::ParsePrometheusSamples(
             iowatch::testing::ReadFile(kMdNodeExporterDir + file))) {
      EXPECT_TRUE(key.starts_with("node_md_")) << key;
      expected.emplace("iowatch_md_" + key.substr(std::string("node_md_").size()), value);
    }
  }
  return expected;
}

// Our samples of the families node_exporter has.
iowatch::testing::Samples MdNodeExporterFamilySamples(const std::string& text) {
  iowatch::testing::Samples ours;
  for (const auto& [key, value] : iowatch::testing::ParsePrometheusSamples(text)) {
    if (kMdNodeExporterFamilies.contains(key.substr(0, key.find('{')))) ours.emplace(key, value);
  }
  return ours;
}

TEST(MdSourceNodeExporter, EveryNodeMdLineUnderOurNameAndNoneBeyond) {
  const auto expected = MdExpectedSamples();
  ASSERT_EQ(expected.size(), 199u);  // 187 from mdstat, 12 from sysfs
  const std::string text = MdRender(MdFixtureSnapshot());
  iowatch::testing::ExpectSameSamples(expected, MdNodeExporterFamilySamples(text), "node_exporter");
}

TEST(MdSourceNodeExporter, BothCollectorsSucceedOnTheFixture) {
  const Snapshot snapshot = MdFixtureSnapshot();
  ASSERT_EQ(snapshot.collectors.size(), 2u);
  EXPECT_EQ(snapshot.collectors[0].name, "mdstat");
  EXPECT_EQ(snapshot.collectors[1].name, "md_sysfs");
  for (const CollectorStatus& status : snapshot.collectors) {
    EXPECT_TRUE(status.success) << status.name << ": " << status.error;
    EXPECT_EQ(status.error, "") << status.name;
  }
}

TEST(MdSourceSync, Md6RecoversAtItsSpeedWithItsTimeLeft) {
  const auto samples = iowatch::testing::ParsePrometheusSamples(MdRender(MdFixtureSnapshot()));
  const iowatch::testing::SampleLabels md6 = {{"device", "md6"}};
  using iowatch::testing::SampleKey;
  EXPECT_EQ(samples.at(SampleKey("iowatch_md_sync_speed_bytes_per_second", md6)), 259783.0 * 1024);
  EXPECT_EQ(samples.at(SampleKey("iowatch_md_sync_remaining_seconds", md6)), 17.0 * 60);
  EXPECT_DOUBLE_EQ(samples.at(SampleKey("iowatch_md_sync_completed_ratio", md6)),
                   16775552.0 / 195310144.0);
  // md0 syncs nothing: no series, not 0.
  EXPECT_FALSE(
      samples.contains(SampleKey("iowatch_md_sync_speed_bytes_per_second", {{"device", "md0"}})));
}

TEST(MdSourceSysfs, MismatchesAndInfoWherePresent) {
  const auto samples = iowatch::testing::ParsePrometheusSamples(MdRender(MdFixtureSnapshot()));
  using iowatch::testing::SampleKey;
  // raid0 has no mismatch_cnt: no series.
  EXPECT_FALSE(samples.contains(SampleKey("iowatch_md_mismatches", {{"device", "md0"}})));
  EXPECT_EQ(samples.at(SampleKey("iowatch_md_chunk_bytes", {{"device", "md0"}})), 524288);
  EXPECT_EQ(samples.at(SampleKey("iowatch_md_chunk_bytes", {{"device", "md1"}})), 0);
  EXPECT_EQ(samples.at(SampleKey("iowatch_md_info", {{"device", "md6"},
                                                     {"level", "raid6"},
                                                     {"array_state", "active"},
                                                     {"sync_action", "recover"}})),
            1);
}

TEST(MdSourceWithoutMd, NoSeriesAndCollectorsThatSucceedSayingWhatWasAbsent) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "proc");
  std::filesystem::create_directories(dir.path() / "sys/block/sda");
  const Snapshot snapshot = MdCollect(FileTree(dir.File("proc")), FileTree(dir.File("sys")));
  EXPECT_EQ(MdRender(snapshot), "");
  ASSERT_EQ(snapshot.collectors.size(), 2u);
  for (const CollectorStatus& status : snapshot.collectors) {
    EXPECT_TRUE(status.success) << status.name << ": " << status.error;
  }
  EXPECT_NE(snapshot.collectors[0].error.find("mdstat"), std::string::npos)
      << snapshot.collectors[0].error;
}

TEST(MdSourceWithoutMd, AMalformedMdstatFailsItsCollectorOnly) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "proc");
  std::filesystem::create_directories(dir.path() / "sys/block");
  std::ofstream(dir.path() / "proc/mdstat")
      << "md0 : active raid1 sda1[0]\n      24889x blocks [1/1] [U]\n";
  const Snapshot snapshot = MdCollect(FileTree(dir.File("proc")), FileTree(dir.File("sys")));
  ASSERT_EQ(snapshot.collectors.size(), 2u);
  EXPECT_FALSE(snapshot.collectors[0].success);
  EXPECT_NE(snapshot.collectors[0].error.find("mdstat"), std::string::npos)
      << snapshot.collectors[0].error;
  EXPECT_TRUE(snapshot.collectors[1].success) << snapshot.collectors[1].error;
}

// Registered: the Sampler runs it and reports both collectors.
TEST(MdSourceRegistered, TheSamplerReportsBothCollectors) {
  Sampler sampler(TestSamplerOptions());
  const auto snapshot = sampler.Collect(FileTree(kMdNodeExporterDir + "/proc"),
                                        FileTree(kMdNodeExporterDir + "/sys"), 1709647629);
  for (const std::string_view name : {"mdstat", "md_sysfs"}) {
    EXPECT_EQ(std::ranges::count(snapshot->collectors, name, &CollectorStatus::name), 1) << name;
  }
  EXPECT_EQ(snapshot->md.arrays.size(), 17u);
  EXPECT_EQ(snapshot->md.sysfs_arrays.size(), 6u);
}

}  // namespace
}  // namespace iowatch::daemon
