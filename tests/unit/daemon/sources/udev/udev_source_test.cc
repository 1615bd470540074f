// The udev source in the Sampler on node_exporter's fixtures: its
// proc/diskstats, node_exporter's default device exclusion with partitions,
// a sysfs tree giving each of its devices the number diskstats gives it, and
// its udev database. Every node_disk_filesystem_info,
// node_disk_device_mapper_info and node_disk_ata_* line node_exporter's
// end-to-end test expects, under iowatch_disk_* with the same labels and
// values, and none beyond. Then: no database, a malformed line, an entry
// that cannot be read, and when entries are read again.
#include "daemon/sources/udev/udev_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "collectors/disk/diskstats.h"
#include "daemon/sources/sampler.h"
#include "tests/unit/daemon/sources/render_families.h"
#include "tests/unit/daemon/sources/test_sampler_options.h"
#include "tests/unit/prometheus_samples.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

namespace fs = std::filesystem;

const std::string kUdevNodeExporterDir = iowatch::testing::FixturesDir() + "/node-exporter";

const std::set<std::string> kUdevFamilies = {
    "iowatch_disk_filesystem_info", "iowatch_disk_device_mapper_info",
    "iowatch_disk_ata_rotation_rate_rpm", "iowatch_disk_ata_write_cache",
    "iowatch_disk_ata_write_cache_enabled"};

void WriteUdevTestFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// `name` is a partition of `disk`: sda1 of sda, mmcblk0p1 of mmcblk0 (not
// ram10 of ram1).
bool UdevTestPartitionOf(const std::string& name, const std::string& disk) {
  if (name.size() <= disk.size() || !name.starts_with(disk)) return false;
  std::string rest = name.substr(disk.size());
  if (std::isdigit(static_cast<unsigned char>(disk.back()))) {
    if (rest[0] != 'p') return false;
    rest.erase(0, 1);
  }
  return !rest.empty() && std::ranges::all_of(rest, [](char c) { return std::isdigit(c); });
}

// sys/block/<disk>/dev and sys/block/<disk>/<partition>/{dev,partition} for
// every line of the diskstats fixture, with its numbers.
void WriteUdevTestSysfs(const fs::path& root) {
  const std::string path = kUdevNodeExporterDir + "/proc/diskstats";
  const auto stats = collectors::ParseDiskstats(iowatch::testing::ReadFile(path), path);
  ASSERT_EQ(stats.disks.size(), 51u);
  for (const collectors::DiskStat& d : stats.disks) {
    const std::string dev = std::to_string(d.major) + ":" + std::to_string(d.minor) + "\n";
    const auto disk = std::ranges::find_if(stats.disks, [&](const collectors::DiskStat& other) {
      return UdevTestPartitionOf(d.name, other.name);
    });
    if (disk == stats.disks.end()) {
      WriteUdevTestFile(root / "block" / d.name / "dev", dev);
      continue;
    }
    WriteUdevTestFile(root / "block" / disk->name / d.name / "dev", dev);
    WriteUdevTestFile(root / "block" / disk->name / d.name / "partition", "1\n");
  }
}

SamplerOptions UdevNodeExporterOptions(const std::string& udev_data,
                                       std::shared_ptr<double> clock) {
  SamplerOptions options = TestSamplerOptions();
  options.partitions = true;  // node_exporter exports them
  options.filter = *collectors::DeviceFilter::Create(
      "", "^(z?ram|loop|fd|(h|s|v|xv)d[a-z]|nvme\\d+n\\d+p)\\d+$");  // its default exclusion
  options.udev_data = udev_data;
  options.monotonic_seconds = [clock] { return *clock; };
  return options;
}

const CollectorStatus& UdevStatus(const Snapshot& snapshot) {
  const auto found = std::ranges::find(snapshot.collectors, "udev", &CollectorStatus::name);
  EXPECT_NE(found, snapshot.collectors.end());
  static const CollectorStatus kNone{};
  return found == snapshot.collectors.end() ? kNone : *found;
}

class UdevSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    WriteUdevTestSysfs(dir_.path() / "sys");
  }
  std::shared_ptr<const Snapshot> Sample(const std::string& udev_data) {
    if (!sampler_) {
      sampler_ = std::make_unique<Sampler>(UdevNodeExporterOptions(udev_data, clock_));
    }
    return sampler_->Collect(procfs_, FileTree(dir_.path() / "sys"), 1709647629);
  }

  iowatch::testing::TempDir dir_;
  FileTree procfs_{kUdevNodeExporterDir + "/proc"};
  std::shared_ptr<double> clock_ = std::make_shared<double>(0);  // monotonic seconds
  std::unique_ptr<Sampler> sampler_;
};

TEST_F(UdevSourceTest, EveryNodeExporterLineUnderOurNameAndNoneBeyond) {
  const auto snapshot = Sample(kUdevNodeExporterDir + "/udev/data");
  ASSERT_EQ(snapshot->block_devices->size(), 15u);  // node_exporter's devices
  iowatch::testing::Samples expected;
  for (const auto& [key, value] : iowatch::testing::ParsePrometheusSamples(
           iowatch::testing::ReadFile(kUdevNodeExporterDir + "/e2e-output-udev.txt"))) {
    ASSERT_TRUE(key.starts_with("node_disk_")) << key;
    expected.emplace("iowatch_disk_" + key.substr(std::string("node_disk_").size()), value);
  }
  ASSERT_EQ(expected.size(), 25u);  // 9 ATA, 6 device-mapper, 10 filesystem
  iowatch::testing::Samples ours;
  for (const auto& [key, value] : iowatch::testing::ParsePrometheusSamples(
           RenderFamilies(AddUdevFamilies, *snapshot, "iowatch_disk_"))) {
    EXPECT_TRUE(kUdevFamilies.contains(key.substr(0, key.find('{')))) << key;
    ours.emplace(key, value);
  }
  iowatch::testing::ExpectSameSamples(expected, ours, "node_exporter");
  const CollectorStatus& status = UdevStatus(*snapshot);
  EXPECT_TRUE(status.success) << status.error;
  EXPECT_EQ(status.error, "");
  EXPECT_EQ(status.parse_errors_total, 0u);
}

TEST_F(UdevSourceTest, WithoutADatabaseNoSeriesAndTheCollectorSaysWhy) {
  const auto snapshot = Sample("/nonexistent/udev/data");
  EXPECT_TRUE(snapshot->udev.devices.empty());
  const CollectorStatus& status = UdevStatus(*snapshot);
  EXPECT_TRUE(status.success);
  EXPECT_EQ(status.error, "no udev database: /nonexistent/udev/data does not exist");
}

TEST_F(UdevSourceTest, MalformedLinesAreCountedAndAnUnreadableEntryFailsTheCollector) {
  const fs::path data = dir_.path() / "udev";
  WriteUdevTestFile(data / "b8:0",
                    "E:ID_ATA=1\nE:ID_ATA_WRITE_CACHE\nE:ID_ATA_ROTATION_RATE_RPM=x\n");
  fs::create_directories(data / "b8:16");  // not a regular file
  WriteUdevTestFile(data / "b8:32", "E:ID_ATA=1\nE:ID_ATA_WRITE_CACHE=1\n");
  const auto snapshot = Sample(data.string());
  const CollectorStatus& status = UdevStatus(*snapshot);
  EXPECT_FALSE(status.success);
  EXPECT_NE(status.error.find((data / "b8:16").string()), std::string::npos) << status.error;
  EXPECT_EQ(status.parse_errors_total, 2u);  // the line without '=', the RPM that is no number
  EXPECT_EQ(status.parse_error,
            (data / "b8:0").string() + ":2: expected 'E:KEY=value', found 'E:ID_ATA_WRITE_CACHE'");
  const auto samples = iowatch::testing::ParsePrometheusSamples(
      RenderFamilies(AddUdevFamilies, *snapshot, "iowatch_disk_"));
  EXPECT_EQ(samples.size(), 1u);  // sdc's, after sdb's unreadable entry
  EXPECT_EQ(
      samples.at(iowatch::testing::SampleKey("iowatch_disk_ata_write_cache", {{"device", "sdc"}})),
      1);
}

TEST_F(UdevSourceTest, EntriesAreReadAgainOnlyAfterAMinute) {
  const fs::path data = dir_.path() / "udev";
  WriteUdevTestFile(data / "b8:0", "E:ID_FS_TYPE=ext4\n");
  EXPECT_EQ(Sample(data.string())->udev.devices.size(), 1u);  // devices discovered: read
  WriteUdevTestFile(data / "b8:16", "E:ID_FS_TYPE=xfs\n");
  *clock_ = 59;
  EXPECT_EQ(Sample(data.string())->udev.devices.size(), 1u);  // served from the first read
  *clock_ = 60;
  EXPECT_EQ(Sample(data.string())->udev.devices.size(), 2u);
}

}  // namespace
}  // namespace iowatch::daemon
