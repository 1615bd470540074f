// The udev source's multipath families in the Sampler on the hand-made
// multipath tree (tests/fixtures/multipath): mpatha with two running paths,
// mpathb with one offline path, the LVM volume over mpatha no map; a path
// that fails between two samples is seen at the next one.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "daemon/sources/sampler.h"
#include "daemon/sources/udev/udev_source.h"
#include "tests/unit/daemon/sources/render_families.h"
#include "tests/unit/daemon/sources/test_sampler_options.h"
#include "tests/unit/prometheus_samples.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

const std::string kMultipathFixtureDir = iowatch::testing::FixturesDir() + "/multipath";

// The multipath families' samples of a snapshot.
iowatch::testing::Samples MultipathSamples(const Snapshot& snapshot) {
  return iowatch::testing::ParsePrometheusSamples(
      RenderFamilies(AddUdevFamilies, snapshot, "iowatch_multipath_"));
}

iowatch::testing::Samples MultipathExpected(std::string_view sdc_state) {
  using iowatch::testing::SampleKey;
  const std::string sdc(sdc_state);
  return {
      {SampleKey("iowatch_multipath_paths", {{"device", "dm-0"}, {"name", "mpatha"}}), 2},
      {SampleKey("iowatch_multipath_paths", {{"device", "dm-1"}, {"name", "mpathb"}}), 1},
      {SampleKey("iowatch_multipath_path_state",
                 {{"device", "dm-0"}, {"name", "mpatha"}, {"path", "sdb"}, {"state", "running"}}),
       1},
      {SampleKey("iowatch_multipath_path_state",
                 {{"device", "dm-0"}, {"name", "mpatha"}, {"path", "sdc"}, {"state", sdc}}),
       1},
      {SampleKey("iowatch_multipath_path_state",
                 {{"device", "dm-1"}, {"name", "mpathb"}, {"path", "sdd"}, {"state", "offline"}}),
       1},
  };
}

const CollectorStatus& MultipathStatus(const Snapshot& snapshot) {
  const auto found = std::ranges::find(snapshot.collectors, "multipath", &CollectorStatus::name);
  EXPECT_NE(found, snapshot.collectors.end());
  static const CollectorStatus kNone{};
  return found == snapshot.collectors.end() ? kNone : *found;
}

TEST(MultipathSource, TwoMapsTheirPathsAndStates) {
  SamplerOptions options = TestSamplerOptions();
  options.udev_data = kMultipathFixtureDir + "/udev/data";
  Sampler sampler(std::move(options));
  const auto snapshot = sampler.Collect(FileTree(kMultipathFixtureDir + "/proc"),
                                        FileTree(kMultipathFixtureDir + "/sys"), 1709647629);
  ASSERT_EQ(snapshot->block_devices->size(), 6u);
  iowatch::testing::ExpectSameSamples(MultipathExpected("running"), MultipathSamples(*snapshot),
                                      "the fixture");
  EXPECT_TRUE(MultipathStatus(*snapshot).success) << MultipathStatus(*snapshot).error;
}

TEST(MultipathSource, APathThatFailsIsSeenAtTheNextSample) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::copy(
      kMultipathFixtureDir, dir.path(),
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  SamplerOptions options = TestSamplerOptions();
  options.udev_data = dir.File("udev/data");
  Sampler sampler(std::move(options));
  const FileTree procfs(dir.path() / "proc");
  const FileTree sysfs(dir.path() / "sys");
  sampler.Collect(procfs, sysfs, 1709647629);
  std::ofstream(dir.path() / "sys/block/sdc/device/state") << "transport-offline\n";
  const auto snapshot = sampler.Collect(procfs, sysfs, 1709647630);
  iowatch::testing::ExpectSameSamples(MultipathExpected("transport-offline"),
                                      MultipathSamples(*snapshot), "the fixture");
}

TEST(MultipathSource, WithoutUdevNoMapsAndNoFailure) {
  Sampler sampler(TestSamplerOptions());  // no udev database
  const auto snapshot = sampler.Collect(FileTree(kMultipathFixtureDir + "/proc"),
                                        FileTree(kMultipathFixtureDir + "/sys"), 1709647629);
  EXPECT_TRUE(snapshot->udev.multipath.empty());
  EXPECT_TRUE(MultipathStatus(*snapshot).success);
}

}  // namespace
}  // namespace iowatch::daemon
