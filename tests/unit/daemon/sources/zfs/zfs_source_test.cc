// The zfs source on node_exporter's fixture tree: every node_zfs_zpool_state
// and node_zfs_zpool_<io field> line its end-to-end test expects
// (e2e-output-zfs-pool.txt) under our name, label zpool as pool, the
// nanosecond fields in seconds, and none of those families' series beyond
// them; and a tree without ZFS, which gives no series and a collector that
// succeeds saying what was absent.
#include "daemon/sources/zfs/zfs_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "daemon/sources/sampler.h"
#include "tests/unit/daemon/sources/one_source.h"
#include "tests/unit/prometheus_samples.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

const std::string kZfsNodeExporterDir = iowatch::testing::FixturesDir() + "/node-exporter";

// node_exporter's family -> ours, and what its value is divided by.
struct ZfsFamilyMapping {
  std::string ours;
  double divisor = 1;
};
const std::map<std::string, ZfsFamilyMapping> kZfsNodeExporterFamilies = {
    {"node_zfs_zpool_state", {"iowatch_zfs_pool_state"}},
    {"node_zfs_zpool_nread", {"iowatch_zfs_pool_read_bytes_total"}},
    {"node_zfs_zpool_nwritten", {"iowatch_zfs_pool_written_bytes_total"}},
    {"node_zfs_zpool_reads", {"iowatch_zfs_pool_reads_total"}},
    {"node_zfs_zpool_writes", {"iowatch_zfs_pool_writes_total"}},
    {"node_zfs_zpool_wcnt", {"iowatch_zfs_pool_waiting_ios"}},
    {"node_zfs_zpool_rcnt", {"iowatch_zfs_pool_running_ios"}},
    {"node_zfs_zpool_wtime", {"iowatch_zfs_pool_wait_time_seconds_total", 1e9}},
    {"node_zfs_zpool_wlentime", {"iowatch_zfs_pool_wait_time_weighted_seconds_total", 1e9}},
    {"node_zfs_zpool_rtime", {"iowatch_zfs_pool_run_time_seconds_total", 1e9}},
    {"node_zfs_zpool_rlentime", {"iowatch_zfs_pool_run_time_weighted_seconds_total", 1e9}},
    {"node_zfs_zpool_wupdate", {"iowatch_zfs_pool_wait_updated_seconds", 1e9}},
    {"node_zfs_zpool_rupdate", {"iowatch_zfs_pool_run_updated_seconds", 1e9}},
};

Snapshot ZfsCollectOn(const std::string& root) {
  return CollectOneSource(ZfsSourceDescriptor(), FileTree(root + "/proc"), FileTree(root + "/sys"));
}

std::string ZfsRender(const Snapshot& snapshot) {
  return RenderSourceFamilies(AddZfsFamilies, snapshot);
}

// node_exporter's lines as we name them: the family mapped, its label zpool
// as pool (renamed in the text, so that the keys sort their labels anew).
iowatch::testing::Samples ZfsExpectedSamples() {
  std::string text = iowatch::testing::ReadFile(kZfsNodeExporterDir + "/e2e-output-zfs-pool.txt");
  for (size_t at = text.find("zpool=\""); at != std::string::npos; at = text.find("zpool=\"", at)) {
    text.erase(at, 1);
  }
  iowatch::testing::Samples expected;
  for (const auto& [key, value] : iowatch::testing::ParsePrometheusSamples(text)) {
    const std::string family = key.substr(0, key.find('{'));
    const auto mapping = kZfsNodeExporterFamilies.find(family);
    if (mapping == kZfsNodeExporterFamilies.end()) {
      ADD_FAILURE() << "unmapped " << key;
      continue;
    }
    expected.emplace(mapping->second.ours + key.substr(family.size()),
                     value / mapping->second.divisor);
  }
  return expected;
}

TEST(ZfsSourceNodeExporter, EveryNodeZpoolLineUnderOurNameAndNoneBeyond) {
  const auto expected = ZfsExpectedSamples();
  ASSERT_EQ(expected.size(), 64u);  // 4 pools x 7 states, 3 pools x 12 io fields
  std::set<std::string> ours_families;
  for (const auto& [node, mapping] : kZfsNodeExporterFamilies) ours_families.insert(mapping.ours);
  iowatch::testing::Samples ours;
  for (const auto& [key, value] :
       iowatch::testing::ParsePrometheusSamples(ZfsRender(ZfsCollectOn(kZfsNodeExporterDir)))) {
    if (ours_families.contains(key.substr(0, key.find('{')))) ours.emplace(key, value);
  }
  iowatch::testing::ExpectSameSamples(expected, ours, "node_exporter");
}

TEST(ZfsSourceNodeExporter, TheCollectorSucceedsOnTheFixture) {
  const Snapshot snapshot = ZfsCollectOn(kZfsNodeExporterDir);
  ASSERT_EQ(snapshot.collectors.size(), 1u);
  EXPECT_EQ(snapshot.collectors[0].name, "zfs_pool");
  EXPECT_TRUE(snapshot.collectors[0].success) << snapshot.collectors[0].error;
  EXPECT_EQ(snapshot.collectors[0].error, "");
  EXPECT_EQ(snapshot.zfs.pools.size(), 4u);
}

TEST(ZfsSourceStates, AStateNodeExporterHasNoLabelForIsOneMoreSeries) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "proc/spl/kstat/zfs/tank");
  std::ofstream(dir.path() / "proc/spl/kstat/zfs/tank/state") << "UNKNOWN\n";
  const auto samples =
      iowatch::testing::ParsePrometheusSamples(ZfsRender(ZfsCollectOn(dir.path().string())));
  using iowatch::testing::SampleKey;
  EXPECT_EQ(
      samples.at(SampleKey("iowatch_zfs_pool_state", {{"pool", "tank"}, {"state", "unknown"}})), 1);
  EXPECT_EQ(
      samples.at(SampleKey("iowatch_zfs_pool_state", {{"pool", "tank"}, {"state", "online"}})), 0);
  EXPECT_EQ(samples.size(), 8u);  // no io file: state only
}

TEST(ZfsSourceWithoutZfs, NoSeriesAndACollectorThatSucceedsSayingWhatWasAbsent) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "proc");
  std::filesystem::create_directories(dir.path() / "sys");
  const Snapshot snapshot = ZfsCollectOn(dir.path().string());
  EXPECT_EQ(ZfsRender(snapshot), "");
  ASSERT_EQ(snapshot.collectors.size(), 1u);
  EXPECT_TRUE(snapshot.collectors[0].success) << snapshot.collectors[0].error;
  EXPECT_NE(snapshot.collectors[0].error.find("no ZFS pools"), std::string::npos)
      << snapshot.collectors[0].error;
  EXPECT_NE(snapshot.collectors[0].error.find("spl/kstat/zfs"), std::string::npos)
      << snapshot.collectors[0].error;
}

TEST(ZfsSourceWithoutZfs, AMalformedIoFileFailsTheCollectorNamingIt) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "proc/spl/kstat/zfs/tank");
  std::ofstream(dir.path() / "proc/spl/kstat/zfs/tank/io") << "garbage\n";
  const Snapshot snapshot = ZfsCollectOn(dir.path().string());
  ASSERT_EQ(snapshot.collectors.size(), 1u);
  EXPECT_FALSE(snapshot.collectors[0].success);
  EXPECT_NE(snapshot.collectors[0].error.find("tank/io:1"), std::string::npos)
      << snapshot.collectors[0].error;
}

// Registered: the Sampler runs it and reports its collector.
TEST(ZfsSourceRegistered, TheSamplerReportsItsCollector) {
  Sampler sampler(TestSamplerOptions());
  const auto snapshot = sampler.Collect(FileTree(kZfsNodeExporterDir + "/proc"),
                                        FileTree(kZfsNodeExporterDir + "/sys"), 1709647629);
  EXPECT_EQ(std::ranges::count(snapshot->collectors, "zfs_pool", &CollectorStatus::name), 1);
  EXPECT_EQ(snapshot->zfs.pools.size(), 4u);
}

}  // namespace
}  // namespace iowatch::daemon
