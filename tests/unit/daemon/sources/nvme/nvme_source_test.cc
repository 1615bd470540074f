// The nvme source on node_exporter's fixture tree: every node_nvme_* line its
// end-to-end test expects (e2e-output-nvme.txt) under iowatch_nvme_* with the
// same labels and values, and none of those families' series beyond them;
// the controller states on the hand-made tree; and a tree without NVMe,
// which gives no series and a collector that succeeds saying what was absent.
#include "daemon/sources/nvme/nvme_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "daemon/sources/sampler.h"
#include "tests/unit/daemon/sources/one_source.h"
#include "tests/unit/prometheus_samples.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

const std::string kNvmeNodeExporterDir = iowatch::testing::FixturesDir() + "/node-exporter";

// The families node_exporter exports too, by our name.
const std::set<std::string> kNvmeNodeExporterFamilies = {
    "iowatch_nvme_info",
    "iowatch_nvme_namespace_info",
    "iowatch_nvme_namespace_capacity_bytes",
    "iowatch_nvme_namespace_size_bytes",
    "iowatch_nvme_namespace_used_bytes",
    "iowatch_nvme_namespace_logical_block_size_bytes"};

Snapshot NvmeCollectOn(const std::string& root) {
  return CollectOneSource(NvmeSourceDescriptor(), FileTree(root + "/proc"),
                          FileTree(root + "/sys"));
}

std::string NvmeRender(const Snapshot& snapshot) {
  return RenderSourceFamilies(AddNvmeFamilies, snapshot);
}

TEST(NvmeSourceNodeExporter, EveryNodeNvmeLineUnderOurNameAndNoneBeyond) {
  iowatch::testing::Samples expected;
  for (const auto& [key, value] : iowatch::testing::ParsePrometheusSamples(
           iowatch::testing::ReadFile(kNvmeNodeExporterDir + "/e2e-output-nvme.txt"))) {
    EXPECT_TRUE(key.starts_with("node_nvme_")) << key;
    expected.emplace("iowatch_nvme_" + key.substr(std::string("node_nvme_").size()), value);
  }
  ASSERT_EQ(expected.size(), 6u);  // the controller, its namespace's info and four figures
  iowatch::testing::Samples ours;
  for (const auto& [key, value] :
       iowatch::testing::ParsePrometheusSamples(NvmeRender(NvmeCollectOn(kNvmeNodeExporterDir)))) {
    if (kNvmeNodeExporterFamilies.contains(key.substr(0, key.find('{')))) ours.emplace(key, value);
  }
  iowatch::testing::ExpectSameSamples(expected, ours, "node_exporter");
}

TEST(NvmeSourceNodeExporter, TheCollectorSucceedsOnTheFixture) {
  const Snapshot snapshot = NvmeCollectOn(kNvmeNodeExporterDir);
  ASSERT_EQ(snapshot.collectors.size(), 1u);
  EXPECT_EQ(snapshot.collectors[0].name, "nvme");
  EXPECT_TRUE(snapshot.collectors[0].success) << snapshot.collectors[0].error;
  EXPECT_EQ(snapshot.collectors[0].error, "");
}

TEST(NvmeSourceStates, OneSeriesAtOnePerControllerAndLiveAtZeroWhenNotLive) {
  const auto samples = iowatch::testing::ParsePrometheusSamples(
      NvmeRender(NvmeCollectOn(iowatch::testing::FixturesDir() + "/nvme-states")));
  using iowatch::testing::SampleKey;
  for (const auto& [device, state] : {std::pair{"nvme1", "resetting"}, std::pair{"nvme2", "dead"},
                                      std::pair{"nvme3", "deleting (no IO)"}}) {
    double ones = 0;
    for (const auto& [key, value] : samples) {
      if (key.starts_with("iowatch_nvme_controller_state{device=\"" + std::string(device) + "\""))
        ones += value;
    }
    EXPECT_EQ(ones, 1) << device;
    EXPECT_EQ(samples.at(SampleKey("iowatch_nvme_controller_state",
                                   {{"device", device}, {"state", state}})),
              1)
        << device;
    EXPECT_EQ(samples.at(SampleKey("iowatch_nvme_controller_state",
                                   {{"device", device}, {"state", "live"}})),
              0)
        << device;
  }
}

TEST(NvmeSourceStates, AStateTheKernelListDoesNotHaveIsOneMoreSeries) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "proc");
  std::filesystem::create_directories(dir.path() / "sys/class/nvme/nvme5");
  std::ofstream(dir.path() / "sys/class/nvme/nvme5/state") << "unknown state\n";
  const auto samples =
      iowatch::testing::ParsePrometheusSamples(NvmeRender(NvmeCollectOn(dir.path().string())));
  using iowatch::testing::SampleKey;
  EXPECT_EQ(samples.at(SampleKey("iowatch_nvme_controller_state",
                                 {{"device", "nvme5"}, {"state", "unknown state"}})),
            1);
  EXPECT_EQ(samples.at(SampleKey("iowatch_nvme_controller_state",
                                 {{"device", "nvme5"}, {"state", "live"}})),
            0);
  // Attributes the tree lacks are empty labels, not a failure.
  EXPECT_EQ(samples.at(SampleKey("iowatch_nvme_info", {{"device", "nvme5"},
                                                       {"firmware_revision", ""},
                                                       {"model", ""},
                                                       {"serial", ""},
                                                       {"state", "unknown state"},
                                                       {"cntlid", ""}})),
            1);
}

TEST(NvmeSourceWithoutNvme, NoSeriesAndACollectorThatSucceedsSayingWhatWasAbsent) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "proc");
  std::filesystem::create_directories(dir.path() / "sys/class/block");
  const Snapshot snapshot = NvmeCollectOn(dir.path().string());
  EXPECT_EQ(NvmeRender(snapshot), "");
  ASSERT_EQ(snapshot.collectors.size(), 1u);
  EXPECT_TRUE(snapshot.collectors[0].success) << snapshot.collectors[0].error;
  EXPECT_NE(snapshot.collectors[0].error.find("no NVMe controllers"), std::string::npos)
      << snapshot.collectors[0].error;
  EXPECT_NE(snapshot.collectors[0].error.find("class/nvme"), std::string::npos)
      << snapshot.collectors[0].error;
}

TEST(NvmeSourceWithoutNvme, AMalformedAttributeFailsTheCollectorNamingIt) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "proc");
  std::filesystem::create_directories(dir.path() / "sys/class/nvme/nvme0/nvme0n1");
  std::ofstream(dir.path() / "sys/class/nvme/nvme0/nvme0n1/nuse") << "lots\n";
  const Snapshot snapshot = NvmeCollectOn(dir.path().string());
  ASSERT_EQ(snapshot.collectors.size(), 1u);
  EXPECT_FALSE(snapshot.collectors[0].success);
  EXPECT_NE(snapshot.collectors[0].error.find("nvme0n1/nuse:1"), std::string::npos)
      << snapshot.collectors[0].error;
}

// Registered: the Sampler runs it and reports its collector.
TEST(NvmeSourceRegistered, TheSamplerReportsItsCollector) {
  Sampler sampler(TestSamplerOptions());
  const auto snapshot = sampler.Collect(FileTree(kNvmeNodeExporterDir + "/proc"),
                                        FileTree(kNvmeNodeExporterDir + "/sys"), 1709647629);
  EXPECT_EQ(std::ranges::count(snapshot->collectors, "nvme", &CollectorStatus::name), 1);
  EXPECT_EQ(snapshot->nvme.controllers.size(), 1u);
}

}  // namespace
}  // namespace iowatch::daemon
