// Disk health from a constructed sample: each disk's SMART state and facts,
// the problems the alerts' conditions raise (and those they leave alone: a
// read-only filesystem's free space, a reallocated sector, a virtual disk's
// missing SMART), a partition's errors and probe series on its disk.
#include "daemon/sampling/snapshot_health.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace iowatch::daemon {
namespace {

collectors::BlockDevice Disk(const std::string& name, uint32_t major, uint32_t minor,
                             const std::string& transport, const std::string& parent = "") {
  collectors::BlockDevice d;
  d.name = name;
  d.major = major;
  d.minor = minor;
  d.transport = transport;
  d.is_partition = !parent.empty();
  d.parent = parent;
  d.model = "Model " + name;
  d.size_bytes = 2'000'000'000'000;
  return d;
}

collectors::SmartReport Ata() {
  collectors::SmartReport r;
  r.protocol = "ATA";
  r.passed = true;
  r.temperature_celsius = 41;
  r.temperature_limit_celsius = 60;
  r.power_on_hours = 12000;
  r.attributes = {{5, "Reallocated_Sector_Ct", 100, 100, 10, 3, true},
                  {197, "Current_Pending_Sector", 100, 100, 0, 8, false}};
  return r;
}

collectors::SmartReport Nvme() {
  collectors::SmartReport r;
  r.protocol = "NVMe";
  r.passed = true;
  r.temperature_celsius = 84;
  r.temperature_limit_celsius = 84;
  r.nvme = collectors::NvmeHealth{0x01, 5, 10, 85, 0, 0, 0, 0, 3};
  return r;
}

FilesystemSeries Filesystem(const std::string& mount, const std::string& disk, uint64_t avail,
                            bool readonly = false) {
  FilesystemSeries f;
  f.device = "/dev/" + disk + "1";
  f.mount_point = mount;
  f.fstype = "ext4";
  f.disk = disk;
  f.readonly = readonly;
  f.usage = collectors::FilesystemUsage{1000, 400, avail, 100, 90};
  return f;
}

Snapshot Sample() {
  Snapshot s;
  s.block_devices = std::make_shared<const std::vector<collectors::BlockDevice>>(
      std::vector<collectors::BlockDevice>{
          Disk("dm-0", 253, 0, "dm"), Disk("nvme0n1", 259, 0, "nvme"), Disk("sda", 8, 0, "scsi"),
          Disk("sda1", 8, 1, "scsi", "sda"), Disk("sdb", 8, 16, "scsi")});
  s.smart.devices = {
      {"nvme0n1", Nvme(), ""}, {"sda", Ata(), ""}, {"sdb", std::nullopt, "no SMART"}};
  s.kmsg.errors = {{"sda", "read", "I/O", false, 2}, {"sda1", "read", "buffer", true, 1}};
  s.kmsg.shutdowns = {{"dm-0", "xfs", 1}};
  s.kmsg.senses = {{"sdb", "Medium Error", 2}, {"sdb", "Unit Attention", 1}};
  s.filesystems.series = {Filesystem("/", "sda", 600), Filesystem("/full", "sda", 30),
                          Filesystem("/ro-full", "sda", 10, true),
                          Filesystem("/data", "dm-0", 500)};
  FilesystemSeries hung = Filesystem("/mnt/nfs", "sdb", 0);
  hung.usage.reset();
  FilesystemSeries broken = Filesystem("/broken", "sdb", 500);
  broken.ext4_errors = collectors::Ext4Errors{4, 1700000000, 1700000100};
  s.filesystems.series.push_back(hung);
  s.filesystems.series.push_back(broken);
  return s;
}

const DiskHealth& Named(const HostHealth& h, const std::string& name) {
  const auto it = std::ranges::find(h.disks, name, &DiskHealth::name);
  EXPECT_NE(it, h.disks.end()) << name;
  return *it;
}

bool Has(const std::vector<std::string>& problems, const std::string& part) {
  return std::ranges::any_of(
      problems, [&](const std::string& p) { return p.find(part) != std::string::npos; });
}

// A passive series standing regressed is a problem of its disk, saying
// how much slower, since when and what it measured; one that is not is
// listed, not a problem.
TEST(SnapshotHealth, APassiveRegressionIsAProblemOfItsDisk) {
  const Snapshot s = Sample();
  const std::vector<PassiveSeriesVerdict> passive = {
      {"sda", "read", "small", "device", true, 1'796'000'000'000, 1.62},
      {"sda", "write", "all", "diskstats", false, 0, 0.98},
      {"sdb", "read", "all", "diskstats", true, 0, 0},
      {"sdb", "write", "all", "diskstats", true, 0, 1.01, 1.14}};
  const HostHealth h = BuildHostHealth(s, {}, passive, "", true);
  const DiskHealth& sda = Named(h, "sda");
  ASSERT_EQ(sda.passive.size(), 2u);
  EXPECT_TRUE(Has(sda.problems,
                  "passive judge: read small (device stage): 1.62× its past since 2026-11-30 "
                  "00:53 UTC"))
      << ::testing::PrintToString(sda.problems);
  EXPECT_FALSE(Has(sda.problems, "write all"));
  EXPECT_EQ(DescribePassive(passive[1]), "write all (await, queue included): no regression");
  EXPECT_TRUE(Has(Named(h, "sdb").problems,
                  "passive judge: read all (await, queue included): slower than its past"));
  EXPECT_TRUE(Has(Named(h, "sdb").problems,
                  "passive judge: write all (await, queue included): 1.14× its first day (a slow "
                  "drift)"));
}

TEST(SnapshotHealth, EachWholeDiskWithItsSmartErrorsFilesystemsAndProblems) {
  const Snapshot s = Sample();
  // The store keeps device numbers; a series on a partition is its disk's.
  const std::vector<ProbeSeriesVerdict> probes = {{"nightly", "259:0", true},
                                                  {"quick", "8:1", false}};
  const HostHealth h = BuildHostHealth(s, probes, {}, "", true);
  ASSERT_EQ(h.disks.size(), 4u);  // sda1 is sda's

  const DiskHealth& sda = Named(h, "sda");
  EXPECT_EQ(sda.smart.state, "passed");
  EXPECT_EQ(sda.io_errors.size(), 2u);  // the partition's buffer errors too
  EXPECT_TRUE(Has(sda.problems, "8 pending sectors (attribute 197)"));
  EXPECT_FALSE(Has(sda.problems, "reallocated"));  // a fact, not a problem
  EXPECT_TRUE(Has(sda.problems, "2 I/O error(s) on read requests"));
  EXPECT_FALSE(Has(sda.problems, "buffer"));  // consequences, not counted again
  EXPECT_TRUE(Has(sda.problems, "/full: 3.0 % space left"));
  EXPECT_FALSE(Has(sda.problems, "/ro-full"));  // read-only: nobody fills it
  EXPECT_FALSE(Has(sda.problems, "temperature"));
  ASSERT_EQ(sda.filesystems.size(), 3u);
  EXPECT_EQ(*sda.filesystems[0].used_percent, 50);  // df: used 600 / (used 600 + avail 600)
  EXPECT_EQ(*sda.filesystems[0].inodes_used_percent, 10);
  EXPECT_EQ(sda.problems.size(), 3u);
  ASSERT_EQ(sda.probes.size(), 1u);
  EXPECT_EQ(sda.probes[0].job, "quick");

  const DiskHealth& nvme = Named(h, "nvme0n1");
  EXPECT_TRUE(Has(nvme.problems, "NVMe critical warning 0x01"));
  EXPECT_TRUE(Has(nvme.problems, "available spare 5 % is below its threshold, 10 %"));
  EXPECT_TRUE(Has(nvme.problems, "85 % of its rated endurance used"));
  EXPECT_TRUE(Has(nvme.problems, "at its temperature limit (84 °C)"));
  EXPECT_TRUE(Has(nvme.problems, "probe nightly: regressed"));

  const DiskHealth& sdb = Named(h, "sdb");
  EXPECT_EQ(sdb.smart.state, "unavailable");
  EXPECT_EQ(sdb.smart.detail, "no SMART");
  EXPECT_TRUE(Has(sdb.problems, "/mnt/nfs: unreadable"));
  EXPECT_TRUE(Has(sdb.problems, "/broken: ext4 recorded 4 error(s)"));
  EXPECT_TRUE(Has(sdb.problems, "2 SCSI command(s) ended with Medium Error"));
  EXPECT_FALSE(Has(sdb.problems, "Unit Attention"));  // a reset's, not the medium's
  EXPECT_EQ(sdb.problems.size(), 3u);                 // no SMART is not a problem of the disk

  const DiskHealth& dm = Named(h, "dm-0");
  EXPECT_EQ(dm.smart.state, "none");
  EXPECT_EQ(dm.problems,
            (std::vector<std::string>{"xfs on dm-0 shut down 1 time(s) since boot (kernel log)"}));
  EXPECT_EQ(h.Problems(), 3u + 5 + 3 + 1);
}

TEST(SnapshotHealth, OneDiskWhenNamedAndSmartNotRun) {
  const HostHealth h = BuildHostHealth(Sample(), {}, {}, "sdb", false);
  ASSERT_EQ(h.disks.size(), 1u);
  EXPECT_EQ(h.disks[0].smart.state, "not run");
  EXPECT_TRUE(BuildHostHealth(Sample(), {}, {}, "sda1", true).disks.empty());  // not a whole disk
  EXPECT_EQ(FindDisk(h, "sdb"), &h.disks[0]);
  EXPECT_EQ(FindDisk(h, "sda"), nullptr);
}

TEST(SnapshotHealth, ARequestTheDiskDoesNotDoIsListedNotAProblem) {
  Snapshot s = Sample();
  // mkfs.ext4 zeroing its journal on a loop device over tmpfs, a DISCARD a
  // disk refuses, a zoned writer over its open zones: the device is fine.
  s.kmsg.errors = {{"sda", "discard", "operation not supported", false, 1},
                   {"sda", "write", "open zones exceeded", false, 1},
                   {"sda", "write_zeroes", "operation not supported", false, 4},
                   {"sdb", "read", "operation not supported", false, 1},
                   {"sdb", "write", "invalid", false, 1}};
  const HostHealth h = BuildHostHealth(s, {}, {}, "", false);
  const DiskHealth& sda = Named(h, "sda");
  EXPECT_EQ(sda.io_errors.size(), 3u);  // listed
  EXPECT_FALSE(Has(sda.problems, "error(s) on")) << sda.problems.front();
  // A read the device says it does not do is its failure; an invalid request is the caller's.
  const DiskHealth& sdb = Named(h, "sdb");
  EXPECT_TRUE(Has(sdb.problems, "1 operation not supported error(s) on read requests"));
  EXPECT_FALSE(Has(sdb.problems, "invalid"));
}

TEST(SnapshotHealth, FiguresSmartctlGaveOutOfRangeAreProblemsNotSilence) {
  Snapshot s = Sample();
  collectors::SmartReport r = Nvme();
  r.temperature_celsius.reset();
  r.nvme = collectors::NvmeHealth{0, 100, 10, 3, 1, 2, std::nullopt, 0, 3};
  r.warnings = {
      "nvme_smart_health_information_log.media_errors: expected an integer in [0, "
      "18446744073709551615], found -1; left out"};
  s.smart.devices[0].report = r;
  const HostHealth h = BuildHostHealth(s, {}, {}, "nvme0n1", true);
  ASSERT_EQ(h.disks.size(), 1u);
  EXPECT_TRUE(Has(h.disks[0].problems,
                  "smartctl's output rejected: "
                  "nvme_smart_health_information_log.media_errors"));
  EXPECT_EQ(h.disks[0].problems.size(), 1u);
  // The fact smartctl did not give is absent, not 0 or 1.8e19.
  EXPECT_FALSE(std::ranges::any_of(h.disks[0].smart.facts,
                                   [](const auto& f) { return f.first == "media errors"; }));
  EXPECT_TRUE(std::ranges::any_of(h.disks[0].smart.facts,
                                  [](const auto& f) { return f.first == "unsafe shutdowns"; }));
}

}  // namespace
}  // namespace iowatch::daemon
