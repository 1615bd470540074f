#include "collectors/disk/block_devices.h"

#include <gtest/gtest.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "collectors/disk/device_filter.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::collectors {
namespace {

const FileTree kHandMade(iowatch::testing::FixturesDir() + "/block-devices/sys");

TEST(DiscoverBlockDevices, DisksPartitionsDmMdAndQueueAttributes) {
  const auto devices = DiscoverBlockDevices(kHandMade);
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  std::vector<std::string> names;
  for (const auto& d : *devices) names.push_back(d.name);
  EXPECT_EQ(names, (std::vector<std::string>{"dm-0", "md0", "nvme0n1", "nvme0n1p1", "sda", "sda1",
                                             "sda2"}));
  const BlockDevice& dm = (*devices)[0];
  EXPECT_EQ(dm.dm_name, "vg0-root");
  EXPECT_EQ(dm.major, 253u);
  const BlockDevice& md = (*devices)[1];
  ASSERT_TRUE(md.md.has_value());
  EXPECT_EQ(md.md->level, "raid1");
  EXPECT_EQ(md.md->chunk_bytes, 524288u);
  EXPECT_EQ(md.md->raid_disks, 2u);
  const BlockDevice& nvme = (*devices)[2];
  EXPECT_EQ(nvme.queue.rotational, false);
  EXPECT_EQ(nvme.queue.logical_block_size, 512u);
  EXPECT_EQ(nvme.queue.physical_block_size, 4096u);
  EXPECT_EQ(nvme.queue.scheduler, "none");
  EXPECT_EQ(nvme.queue.nr_requests, 1023u);
  EXPECT_EQ(nvme.queue.max_sectors_kb, 1280u);
  EXPECT_EQ(nvme.queue.read_ahead_kb, 128u);
  EXPECT_EQ(nvme.queue.optimal_io_size, 0u);
  EXPECT_EQ(nvme.model, "Samsung SSD 980 PRO 1TB");
  EXPECT_EQ(nvme.serial, "S5GXNX0R123456");
  const BlockDevice& part = (*devices)[3];
  EXPECT_TRUE(part.is_partition);
  EXPECT_EQ(part.parent, "nvme0n1");
  EXPECT_EQ(part.stat_path, "block/nvme0n1/nvme0n1p1/stat");
  EXPECT_EQ(part.queue.physical_block_size, 4096u);  // inherited from the disk
  const BlockDevice& sda = (*devices)[4];
  EXPECT_EQ(sda.queue.rotational, true);
  EXPECT_EQ(sda.queue.scheduler, "mq-deadline");
  EXPECT_EQ(sda.major, 8u);
  EXPECT_EQ(sda.minor, 0u);
}

TEST(DiscoverBlockDevices, MissingSysfsIsAnError) {
  const auto devices = DiscoverBlockDevices(FileTree("/nonexistent"));
  ASSERT_FALSE(devices.has_value());
  EXPECT_EQ(devices.error().code, ErrorCode::kNotFound);
}

TEST(ReadBlockTopology, NamesPartitionsAndDmNames) {
  const auto t = ReadBlockTopology(kHandMade);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->disks, (std::set<std::string>{"dm-0", "md0", "nvme0n1", "sda"}));
  EXPECT_EQ(t->partitions.at("sda"), (std::vector<std::string>{"sda1", "sda2"}));
  EXPECT_EQ(t->dm_names.at("dm-0"), "vg0-root");
}

TEST(ReadBlockTopology, RealSysfsOfThisMachine) {
  const auto t = ReadBlockTopology(FileTree(iowatch::testing::FixturesDir() + "/real-vm/sys"));
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->disks.contains("vda"));
}

const FileTree kCciss(iowatch::testing::FixturesDir() + "/cciss/sys");

TEST(DiscoverBlockDevices, KernelNamesWhereSysfsWritesABang) {
  const auto devices = DiscoverBlockDevices(kCciss);
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  ASSERT_EQ(devices->size(), 3u);
  const BlockDevice& disk = (*devices)[0];
  EXPECT_EQ(disk.name, "cciss/c0d0");
  EXPECT_EQ(disk.stat_path, "block/cciss!c0d0/stat");
  EXPECT_EQ(disk.model, "LOGICAL VOLUME");
  EXPECT_EQ(disk.queue.rotational, true);
  const BlockDevice& part = (*devices)[1];
  EXPECT_EQ(part.name, "cciss/c0d0p1");
  EXPECT_TRUE(part.is_partition);
  EXPECT_EQ(part.parent, "cciss/c0d0");
  EXPECT_EQ(part.stat_path, "block/cciss!c0d0/cciss!c0d0p1/stat");
  EXPECT_EQ(part.major, 104u);
  EXPECT_EQ(part.minor, 1u);
  EXPECT_EQ((*devices)[2].name, "sda");
}

TEST(DiscoverBlockDevices, NamesOnlyReadsNoAttributes) {
  const auto devices = DiscoverBlockDevices(kCciss, Detail::kNames);
  ASSERT_TRUE(devices.has_value());
  EXPECT_EQ((*devices)[0].name, "cciss/c0d0");
  EXPECT_EQ((*devices)[0].model, "");
  EXPECT_FALSE((*devices)[0].queue.rotational.has_value());
}

TEST(DiscoverBlockDevices, AMalformedDevFileIsFlaggedNotFatal) {
  const auto devices = DiscoverBlockDevices(kHandMade);
  ASSERT_TRUE(devices.has_value());
  for (const BlockDevice& d : *devices) EXPECT_FALSE(d.malformed_dev) << d.name;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "iowatch-bad-dev";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "block/sdz");
  std::ofstream(dir / "block/sdz/dev") << "8:x\n";
  const auto bad = DiscoverBlockDevices(FileTree(dir));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(bad.has_value());
  ASSERT_EQ(bad->size(), 1u);
  EXPECT_TRUE((*bad)[0].malformed_dev);
  EXPECT_EQ((*bad)[0].major, 0u);
}

// md/ is read by collectors/md's readers: a reshape's "5 (4)" is 5 disks; a
// malformed attribute is 0 and discovery goes on.
TEST(DiscoverBlockDevices, MdGeometryDuringAReshapeAndAMalformedChunk) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "block/md9/md");
  std::ofstream(dir.path() / "block/md9/dev") << "9:9\n";
  std::ofstream(dir.path() / "block/md9/md/level") << "raid5\n";
  std::ofstream(dir.path() / "block/md9/md/raid_disks") << "5 (4)\n";
  std::ofstream(dir.path() / "block/md9/md/chunk_size") << "64k\n";
  std::ofstream(dir.path() / "block/md9/md/layout") << "2\n";
  const auto devices = DiscoverBlockDevices(FileTree(dir.path()));
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  ASSERT_EQ(devices->size(), 1u);
  ASSERT_TRUE((*devices)[0].md.has_value());
  EXPECT_EQ((*devices)[0].md->level, "raid5");
  EXPECT_EQ((*devices)[0].md->raid_disks, 5u);
  EXPECT_EQ((*devices)[0].md->chunk_bytes, 0u);
  EXPECT_EQ((*devices)[0].md->layout, 2u);
}

TEST(DiscoverBlockDevices, IdentityBytesThatAreNotUtf8AreReplaced) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "iowatch-bad-model";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "block/sdz/device");
  std::ofstream(dir / "block/sdz/dev") << "8:0\n";
  std::ofstream(dir / "block/sdz/device/model") << "WDC\xFFWD  \n";
  const auto devices = DiscoverBlockDevices(FileTree(dir));
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(devices.has_value());
  EXPECT_EQ((*devices)[0].model, "WDC\xEF\xBF\xBDWD");  // a label value Prometheus accepts
}

TEST(FindWholeDisk, APartitionIsItsDiskWithTheDisksAttributes) {
  const auto disk = FindWholeDisk(kCciss, 104, 1);
  ASSERT_TRUE(disk.has_value());
  EXPECT_EQ(disk->name, "cciss/c0d0");
  EXPECT_EQ(disk->major, 104u);
  EXPECT_EQ(disk->minor, 0u);
  EXPECT_EQ(disk->model, "LOGICAL VOLUME");
  const auto itself = FindWholeDisk(kCciss, 8, 0);
  ASSERT_TRUE(itself.has_value());
  EXPECT_EQ(itself->name, "sda");
  EXPECT_FALSE(FindWholeDisk(kCciss, 9, 9).has_value());
  EXPECT_FALSE(FindWholeDisk(FileTree("/nonexistent"), 8, 0).has_value());
}

TEST(ReadBlockTopology, CcissPartitionsBelongToTheirDisk) {
  const auto t = ReadBlockTopology(kCciss);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->disks, (std::set<std::string>{"cciss/c0d0", "sda"}));
  EXPECT_EQ(t->partitions.at("cciss/c0d0"), (std::vector<std::string>{"cciss/c0d0p1"}));
}

TEST(ActiveScheduler, BracketedEntry) {
  EXPECT_EQ(ActiveScheduler("none [mq-deadline] kyber bfq\n"), "mq-deadline");
  EXPECT_EQ(ActiveScheduler("none\n"), "none");
}

TEST(DeviceFilter, IncludeAndExcludeMatchWholeNames) {
  const auto f = DeviceFilter::Create("^(sd|nvme).*", "^(loop|ram|zram)\\d+$|.*p\\d+$");
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->Matches("sda"));
  EXPECT_TRUE(f->Matches("nvme0n1"));
  EXPECT_FALSE(f->Matches("nvme0n1p1"));
  EXPECT_FALSE(f->Matches("loop0"));
  EXPECT_FALSE(f->Matches("dm-0"));
  EXPECT_TRUE(DeviceFilter().Matches("anything"));
}

TEST(DeviceFilter, InvalidPatternIsReportedWithThePattern) {
  const auto f = DeviceFilter::Create("(", "");
  ASSERT_FALSE(f.has_value());
  EXPECT_EQ(f.error().message,
            "include device pattern: expected a regular expression (RE2 syntax), found \"(\" "
            "(missing ): ()");
}

// Adversarial tests: a backtracking engine took 9 s for
// `(a+)+$` on a 28-character name and overflowed its stack on a 50,000-byte
// name. RE2 is linear; the margin here is three orders of magnitude.
TEST(DeviceFilter, MatchingIsLinearInTheName) {
  const auto f = DeviceFilter::Create("(a+)+$", "(x*)*y");
  ASSERT_TRUE(f.has_value());
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(f->Matches(std::string(28, 'a') + "b"));
  EXPECT_FALSE(f->Matches(std::string(50'000, 'a') + "!"));
  EXPECT_TRUE(f->Matches(std::string(50'000, 'a')));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

const FileTree kTopology(iowatch::testing::FixturesDir() + "/topology/sys");

// The fake stat of a loop device's backing file: /srv/images/a.img is on sda1.
std::optional<uint64_t> BackingFileOnSda1(const std::string& path) {
  if (path == "/srv/images/a.img") return makedev(8, 1);
  return std::nullopt;
}

const BlockDevice& Named(const std::vector<BlockDevice>& devices, std::string_view name) {
  const auto found = std::ranges::find(devices, name, &BlockDevice::name);
  EXPECT_NE(found, devices.end()) << name;
  return *found;
}

TEST(DiscoverBlockDevices, IdentityAsAFleetComparesDisks) {
  const auto devices = DiscoverBlockDevices(kTopology, Detail::kAttributes, BackingFileOnSda1);
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  const BlockDevice& sda = Named(*devices, "sda");
  EXPECT_EQ(sda.transport, "scsi");
  EXPECT_EQ(sda.vendor, "ATA");
  EXPECT_EQ(sda.model, "ST4000NM0035-1V4107");
  EXPECT_EQ(sda.firmware_rev, "TN03");  // SCSI: device/rev
  EXPECT_EQ(sda.wwid, "naa.5000c500a1b2c3d4");
  EXPECT_EQ(sda.wwn, "0x5000c500a1b2c3d4");
  EXPECT_EQ(sda.size_bytes, 7814037168ull * 512);
  const BlockDevice& nvme = Named(*devices, "nvme0n1");
  EXPECT_EQ(nvme.transport, "nvme");
  EXPECT_EQ(nvme.firmware_rev, "5B2QGXA7");
  EXPECT_EQ(nvme.wwn, "eui.0025388b71b0e1a5");
  EXPECT_EQ(nvme.serial, "S5GXNX0R123456");
  EXPECT_EQ(Named(*devices, "nvme0n1p2").size_bytes, 976762584ull * 512);
  const BlockDevice& vda = Named(*devices, "vda");
  EXPECT_EQ(vda.transport, "virtio");
  EXPECT_EQ(vda.serial, "disk-0001");  // virtio-blk: in the block directory
  EXPECT_EQ(vda.wwn, "");
  EXPECT_EQ(Named(*devices, "dm-0").transport, "dm");
  EXPECT_EQ(Named(*devices, "md0").transport, "md");
  EXPECT_EQ(Named(*devices, "loop0").transport, "loop");
  EXPECT_EQ(Named(*devices, "loop0").loop_backing_file, "/srv/images/a.img");
}

TEST(DiscoverBlockDevices, DiskseqOfWholeDisksWhereTheKernelHasIt) {
  const auto devices = DiscoverBlockDevices(kTopology, Detail::kAttributes, BackingFileOnSda1);
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  EXPECT_EQ(Named(*devices, "sda").diskseq, 12u);
  EXPECT_EQ(Named(*devices, "nvme0n1").diskseq, 7u);
  EXPECT_EQ(Named(*devices, "nvme0n1p2").diskseq, std::nullopt);  // partitions: their disk's
  EXPECT_EQ(Named(*devices, "vda").diskseq, std::nullopt);        // no file: before 5.15
  EXPECT_EQ(ReadDiskseq(kTopology, Named(*devices, "sda")), 12u);
  EXPECT_EQ(DeviceIdentityOf(Named(*devices, "sda")),
            (DeviceIdentity{8, 0, 12, "naa.5000c500a1b2c3d4", Named(*devices, "sda").serial}));
}

TEST(SameDevice, NumbersMustMatchAndWhatIsKnownOnBothSides) {
  const DeviceIdentity disk{8, 0, 12, "naa.5000c500a1b2c3d4", "ZA1"};
  EXPECT_TRUE(SameDevice(disk, disk));
  DeviceIdentity other = disk;
  other.diskseq = 13;  // the same disk plugged again: its counters are new
  EXPECT_FALSE(SameDevice(disk, other));
  other = disk;
  other.wwid = "naa.5000c500ffffffff";
  EXPECT_FALSE(SameDevice(disk, other));
  other = disk;
  other.serial = "ZA2";
  EXPECT_FALSE(SameDevice(disk, other));
  other = disk;
  other.minor = 16;
  EXPECT_FALSE(SameDevice(disk, other));
  // Unread on one side (a failed discovery, a kernel without diskseq) tells nothing.
  EXPECT_TRUE(SameDevice(disk, DeviceIdentity{8, 0, std::nullopt, "", ""}));
  EXPECT_TRUE(SameDevice(DeviceIdentity{8, 0, std::nullopt, "", ""}, disk));
}

TEST(DiscoverBlockDevices, HoldersWalkFromEachDiskToWhatIsStackedOnIt) {
  const auto devices = DiscoverBlockDevices(kTopology, Detail::kAttributes, BackingFileOnSda1);
  ASSERT_TRUE(devices.has_value()) << devices.error().ToString();
  // dm-0 over two whole disks; a loop device's file on a partition of one.
  EXPECT_EQ(Named(*devices, "sda").holders, (std::vector<Holder>{{"", "dm-0"}, {"sda1", "loop0"}}));
  EXPECT_EQ(Named(*devices, "sdb").holders, (std::vector<Holder>{{"", "dm-0"}}));
  // md over partitions: the disk carries its partitions' holders.
  EXPECT_EQ(Named(*devices, "nvme0n1").holders,
            (std::vector<Holder>{{"nvme0n1p1", "md0"}, {"nvme0n1p2", "md0"}}));
  EXPECT_TRUE(Named(*devices, "nvme0n1p1").holders.empty());
  EXPECT_EQ(Named(*devices, "md0").holders, (std::vector<Holder>{{"", "dm-1"}}));
  EXPECT_TRUE(Named(*devices, "dm-1").holders.empty());
  // A backing file on no block device (tmpfs) or that cannot be stat()ed: no edge.
  const auto unplaced = DiscoverBlockDevices(
      kTopology, Detail::kAttributes,
      [](const std::string&) -> std::optional<uint64_t> { return std::nullopt; });
  ASSERT_TRUE(unplaced.has_value());
  EXPECT_EQ(Named(*unplaced, "sda").holders, (std::vector<Holder>{{"", "dm-0"}}));
  // Names only: no holders, no identity.
  const auto names = DiscoverBlockDevices(kTopology, Detail::kNames, BackingFileOnSda1);
  ASSERT_TRUE(names.has_value());
  EXPECT_TRUE(Named(*names, "sda").holders.empty());
}

TEST(TransportOf, DirectoriesThenTheBusThenTheKernelsNaming) {
  EXPECT_EQ(TransportOf("sdc", false, false, false, "scsi:t-0x00"), "scsi");
  EXPECT_EQ(TransportOf("sdc", false, false, false, "virtio:d00000008v00001AF4"), "virtio");
  EXPECT_EQ(TransportOf("dm-3", true, false, false, ""), "dm");
  EXPECT_EQ(TransportOf("mmcblk0", false, false, false, ""), "mmc");
  EXPECT_EQ(TransportOf("xvda", false, false, false, ""), "xen");
  EXPECT_EQ(TransportOf("vdb", false, false, false, ""), "virtio");
  EXPECT_EQ(TransportOf("zram0", false, false, false, ""), "zram");
  EXPECT_EQ(TransportOf("pmem0", false, false, false, ""), "");
  EXPECT_EQ(TransportOf("sdc", false, false, false, "scsix"), "scsi");  // by name
}

}  // namespace
}  // namespace iowatch::collectors
