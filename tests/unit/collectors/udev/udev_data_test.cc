// ReadUdevData on node_exporter's udev database fixture (its figures against
// every node_disk_filesystem_info, node_disk_device_mapper_info and
// node_disk_ata_* line node_exporter exports from it), on entries written
// here in udev's format, and on malformed lines (skipped, naming file and line).
#include "collectors/udev/udev_data.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/prometheus_samples.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::collectors {
namespace {

const std::string kUdevFixtureDir = iowatch::testing::FixturesDir() + "/node-exporter";

// The devices node_exporter's end-to-end test exports (its diskstats
// fixture's lines past the default exclusion), with their numbers.
struct UdevFixtureDevice {
  const char* name;
  uint32_t major;
  uint32_t minor;
};
constexpr UdevFixtureDevice kUdevFixtureDevices[] = {
    {"dm-0", 252, 0},      {"dm-1", 252, 1},    {"dm-2", 252, 2},    {"dm-3", 252, 3},
    {"dm-4", 252, 4},      {"dm-5", 252, 5},    {"mmcblk0", 179, 0}, {"mmcblk0p1", 179, 1},
    {"mmcblk0p2", 179, 2}, {"nvme0n1", 259, 0}, {"sda", 8, 0},       {"sdb", 8, 16},
    {"sdc", 8, 32},        {"sr0", 11, 0},      {"vda", 254, 0},
};

void AddUdevSamples(std::string_view device, const NodeUdevFigures& f,
                    iowatch::testing::Samples& samples) {
  using iowatch::testing::SampleKey;
  const std::string name(device);
  if (f.filesystem) {
    samples[SampleKey("node_disk_filesystem_info", {{"device", name},
                                                    {"type", f.filesystem->type},
                                                    {"usage", f.filesystem->usage},
                                                    {"uuid", f.filesystem->uuid},
                                                    {"version", f.filesystem->version}})] = 1;
  }
  if (f.device_mapper) {
    samples[SampleKey("node_disk_device_mapper_info", {{"device", name},
                                                       {"name", f.device_mapper->name},
                                                       {"uuid", f.device_mapper->uuid},
                                                       {"vg_name", f.device_mapper->vg_name},
                                                       {"lv_name", f.device_mapper->lv_name},
                                                       {"lv_layer", f.device_mapper->lv_layer}})] =
        1;
  }
  const std::pair<const char*, const std::optional<double>*> ata[] = {
      {"node_disk_ata_rotation_rate_rpm", &f.ata_rotation_rate_rpm},
      {"node_disk_ata_write_cache", &f.ata_write_cache},
      {"node_disk_ata_write_cache_enabled", &f.ata_write_cache_enabled},
  };
  for (const auto& [family, value] : ata) {
    if (*value) samples[SampleKey(family, {{"device", name}})] = **value;
  }
}

TEST(UdevData, NodeExporterFixtureGivesEveryLineNodeExporterExports) {
  const FileTree data(kUdevFixtureDir + "/udev/data");
  iowatch::testing::Samples ours;
  for (const UdevFixtureDevice& d : kUdevFixtureDevices) {
    const auto properties = ReadUdevData(data, d.major, d.minor);
    ASSERT_TRUE(properties) << properties.error().ToString();
    ASSERT_TRUE(*properties) << d.name << ": no entry";
    EXPECT_TRUE((*properties)->skipped.empty()) << d.name;
    const NodeUdevFigures figures = NodeExporterUdevFigures(**properties);
    EXPECT_TRUE(figures.unparsed.empty()) << d.name;
    AddUdevSamples(d.name, figures, ours);
  }
  const auto theirs = iowatch::testing::ParsePrometheusSamples(
      iowatch::testing::ReadFile(kUdevFixtureDir + "/e2e-output-udev.txt"));
  // 3 × 3 ATA, 6 device-mapper and 10 filesystem lines.
  ASSERT_EQ(theirs.size(), 25u);
  iowatch::testing::ExpectSameSamples(theirs, ours, "node_exporter");
}

TEST(UdevData, CdromWithAnEmptyFilesystemTypeHasNoFilesystem) {
  const auto properties = ReadUdevData(FileTree(kUdevFixtureDir + "/udev/data"), 11, 0);
  ASSERT_TRUE(properties && *properties);
  EXPECT_EQ((*properties)->Get("ID_FS_TYPE"), "");
  EXPECT_TRUE((*properties)->values.contains("ID_FS_TYPE"));
  EXPECT_EQ((*properties)->Get("ID_MODEL"), "Virtual_CDROM0");
  EXPECT_EQ(NodeExporterUdevFigures(**properties), NodeUdevFigures{});
}

TEST(UdevData, MissingEntryOrDirectoryIsNoEntry) {
  const auto none = ReadUdevData(FileTree(kUdevFixtureDir + "/udev/data"), 8, 1);
  ASSERT_TRUE(none) << none.error().ToString();
  EXPECT_FALSE(*none);
  const auto no_udev = ReadUdevData(FileTree("/nonexistent-udev/data"), 8, 0);
  ASSERT_TRUE(no_udev) << no_udev.error().ToString();
  EXPECT_FALSE(*no_udev);
}

TEST(UdevData, OnlyPropertiesAreReadAndTheLastValueOfAKeyStays) {
  const UdevProperties p = ParseUdevData(
      "S:disk/by-id/E:NOT=this\nL:0\nE:DM_NAME=vg0-root\nE:DM_UUID=a=b\nE:DM_NAME=vg0-home\n"
      "G:systemd\nE:EMPTY=\n",
      "b252:0");
  EXPECT_TRUE(p.skipped.empty());
  EXPECT_EQ(p.values.size(), 3u);
  EXPECT_EQ(p.Get("DM_NAME"), "vg0-home");
  EXPECT_EQ(p.Get("DM_UUID"), "a=b");  // cut at the first '='
  EXPECT_EQ(p.Get("EMPTY"), "");
  EXPECT_EQ(p.Get("NOT"), "");
}

TEST(UdevData, PropertyLineWithoutKeyIsSkippedNamingFileAndLine) {
  const UdevProperties p =
      ParseUdevData("E:ID_ATA=1\nE:ID_ATA_WRITE_CACHE\nE:=1\nE:ID_ATA_WRITE_CACHE_ENABLED=1\n",
                    "/run/udev/data/b8:0");
  ASSERT_EQ(p.skipped.size(), 2u);
  EXPECT_EQ(p.skipped[0].ToString(),
            "/run/udev/data/b8:0:2: expected 'E:KEY=value', found 'E:ID_ATA_WRITE_CACHE'");
  EXPECT_EQ(p.skipped[1].line, 3);
  EXPECT_EQ(p.Get("ID_ATA_WRITE_CACHE_ENABLED"), "1");  // the lines after are read
}

TEST(UdevData, ValuesBecomeValidUtf8WithoutControlCharacters) {
  const UdevProperties p = ParseUdevData("E:ID_FS_LABEL=a\tb\xff\n", "x");
  EXPECT_EQ(p.Get("ID_FS_LABEL"), "a b\xEF\xBF\xBD");
}

TEST(UdevData, AtaFiguresOnlyWhereIdAtaIsSetAndOnlyNumbers) {
  UdevProperties p =
      ParseUdevData("E:ID_ATA_ROTATION_RATE_RPM=5400\nE:ID_ATA_WRITE_CACHE=1\n", "x");
  EXPECT_EQ(NodeExporterUdevFigures(p), NodeUdevFigures{});  // no ID_ATA: not an ATA disk
  p = ParseUdevData("E:ID_ATA=1\nE:ID_ATA_ROTATION_RATE_RPM=fast\nE:ID_ATA_WRITE_CACHE=1\n", "x");
  const NodeUdevFigures f = NodeExporterUdevFigures(p);
  EXPECT_FALSE(f.ata_rotation_rate_rpm);
  EXPECT_EQ(f.ata_write_cache, 1);
  EXPECT_FALSE(f.ata_write_cache_enabled);  // absent: no series
  EXPECT_EQ(f.unparsed, std::vector<std::string>{"ID_ATA_ROTATION_RATE_RPM"});
}

TEST(UdevData, UnreadableEntryIsAnErrorNamingIt) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directory(dir.path() / "b8:0");  // not a regular file
  const auto read = ReadUdevData(FileTree(dir.path()), 8, 0);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().ToString().find(dir.File("b8:0")), std::string::npos)
      << read.error().ToString();
}

}  // namespace
}  // namespace iowatch::collectors
