// The sampler on a cciss tree, whose sysfs names ("cciss!c0d0") are not the
// kernel's ("cciss/c0d0"): the disk keeps its identity and its partition is
// filtered as a partition.
#include "daemon/sampling/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/unit/source_tree.h"

namespace iowatch::daemon {
namespace {

const FileTree kProcfs(iowatch::testing::FixturesDir() + "/cciss/proc");
const FileTree kSysfs(iowatch::testing::FixturesDir() + "/cciss/sys");

std::vector<std::string> DeviceNames(const Snapshot& s) {
  std::vector<std::string> names;
  for (const DeviceSnapshot& d : s.devices) names.push_back(d.name);
  return names;
}

TEST(Sampler, ACcissDiskKeepsItsIdentityAndItsPartitionIsAPartition) {
  Sampler sampler(SamplerOptions{});
  const auto snapshot = sampler.Collect(kProcfs, kSysfs, 1000);
  EXPECT_EQ(DeviceNames(*snapshot), (std::vector<std::string>{"cciss/c0d0", "sda"}));
  ASSERT_TRUE(snapshot->block_devices);
  const auto& info = *snapshot->block_devices;
  const auto disk = std::ranges::find(info, "cciss/c0d0", &collectors::BlockDevice::name);
  ASSERT_NE(disk, info.end());
  EXPECT_EQ(disk->model, "LOGICAL VOLUME");
  EXPECT_EQ(disk->major, 104u);
}

TEST(Sampler, PartitionsWhenAsked) {
  SamplerOptions options;
  options.partitions = true;
  Sampler sampler(std::move(options));
  const auto snapshot = sampler.Collect(kProcfs, kSysfs, 1000);
  EXPECT_EQ(DeviceNames(*snapshot),
            (std::vector<std::string>{"cciss/c0d0", "cciss/c0d0p1", "sda"}));
}

}  // namespace
}  // namespace iowatch::daemon
