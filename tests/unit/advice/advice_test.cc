// iowatch advise's findings on made-up arrays (md RAID-0/1/5/6/10 with
// several chunks, a hardware RAID stating its stripe), the md geometry read
// from a fixture sysfs tree written here, and ext4/XFS stripe hints from
// crafted superblocks.
#include "advice/advice.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "common/file_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::advice {
namespace {

using collectors::BlockDevice;
using collectors::DiscoverBlockDevices;
using collectors::MdGeometry;

constexpr uint64_t kKiB = 1024;

BlockDevice Md(std::string level, uint64_t chunk_kib, uint64_t disks, uint64_t layout = 0) {
  BlockDevice d;
  d.name = "md0";
  d.md = MdGeometry{std::move(level), chunk_kib * kKiB, disks, layout};
  d.queue.physical_block_size = 4096;
  d.queue.max_sectors_kb = 1280;
  d.queue.max_hw_sectors_kb = 2147483647;
  d.queue.read_ahead_kb = 128;
  return d;
}

TEST(StripeOfTest, DataDisksAndFullStripePerLevel) {
  struct Case {
    BlockDevice disk;
    uint64_t data_disks;
    uint64_t full_kib;
    bool parity;
  };
  const Case cases[] = {
      {Md("raid0", 64, 4), 4, 256, false},
      {Md("raid0", 512, 2), 2, 1024, false},
      {Md("raid5", 64, 4), 3, 192, true},
      {Md("raid5", 512, 4), 3, 1536, true},
      {Md("raid6", 128, 6), 4, 512, true},
      {Md("raid6", 64, 8), 6, 384, true},
      {Md("raid10", 512, 4, 0x102), 2, 1024, false},  // near=2 (md's default)
      {Md("raid10", 64, 6, 0x201), 3, 192, false},    // far=2
      {Md("raid4", 32, 3), 2, 64, true},
  };
  for (const Case& c : cases) {
    const auto s = StripeOf(c.disk);
    ASSERT_TRUE(s) << c.disk.md->level;
    EXPECT_EQ(s->data_disks, c.data_disks) << c.disk.md->level << " " << c.disk.md->chunk_bytes;
    EXPECT_EQ(s->full_stripe, c.full_kib * kKiB) << c.disk.md->level;
    EXPECT_EQ(s->parity, c.parity) << c.disk.md->level;
  }
  EXPECT_FALSE(StripeOf(Md("raid1", 0, 2)));
  EXPECT_FALSE(StripeOf(Md("linear", 0, 2)));
  BlockDevice hw;  // a controller stating its chunk and full stripe
  hw.queue = {false, 512, 512, "none", 64, 1280, 2048, 128, 256 * kKiB, 1024 * kKiB};
  const auto s = StripeOf(hw);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->data_disks, 4u);
  hw.queue.minimum_io_size = 512;  // a plain disk states its physical block
  EXPECT_FALSE(StripeOf(hw));
}

std::vector<std::string> Names(const std::vector<AdviceFinding>& findings) {
  std::vector<std::string> names;
  for (const AdviceFinding& f : findings) names.push_back(f.finding);
  return names;
}

const AdviceFinding* Find(const std::vector<AdviceFinding>& findings, std::string_view name) {
  const auto it = std::ranges::find(findings, name, &AdviceFinding::finding);
  return it == findings.end() ? nullptr : &*it;
}

TEST(AdviseTest, AFullStripeLargerThanMaxSectorsOnRaid5) {
  DeviceFacts f;
  f.disk = Md("raid5", 512, 4);  // 1536 KiB full stripe, max_sectors_kb 1280
  const auto findings = Advise(f);
  const AdviceFinding* a = Find(findings, "full_stripe_over_max_sectors");
  ASSERT_NE(a, nullptr) << ::testing::PrintToString(Names(findings));
  EXPECT_EQ(a->severity, Severity::kWarning);
  EXPECT_NE(a->text.find("1536 KiB (512 KiB chunk × 3 data disks, md raid5)"), std::string::npos)
      << a->text;
  EXPECT_NE(a->text.find("1280 KiB"), std::string::npos);
  EXPECT_EQ(a->suggestion,
            "echo 1536 > /sys/block/md0/queue/max_sectors_kb (max_hw_sectors_kb allows "
            "2147483647)");
  f.disk.queue.max_hw_sectors_kb = 1024;  // the hardware cannot
  EXPECT_NE(Find(Advise(f), "full_stripe_over_max_sectors")
                ->suggestion.find("a chunk of at most 256 KiB"),
            std::string::npos);
  // RAID-0 has no parity to recompute: no finding; nor a stripe that fits.
  f.disk = Md("raid0", 512, 4);
  EXPECT_EQ(Find(Advise(f), "full_stripe_over_max_sectors"), nullptr);
  f.disk = Md("raid5", 64, 4);
  EXPECT_EQ(Find(Advise(f), "full_stripe_over_max_sectors"), nullptr);
}

TEST(AdviseTest, SmallWritesOnParityRaidFromDiskstatsOrHistograms) {
  DeviceFacts f;
  f.disk = Md("raid6", 128, 6);  // 512 KiB full stripe
  f.observed = {"diskstats since boot", 0, 10'000, 0, 28.0 * kKiB, std::nullopt, std::nullopt};
  const auto found1 = Advise(f);
  const AdviceFinding* a = Find(found1, "small_writes_on_parity_raid");
  ASSERT_NE(a, nullptr);
  EXPECT_NE(a->text.find("writes average 28.0 KiB, less than the full stripe, 512 KiB "
                         "(diskstats since boot, 10000 writes)"),
            std::string::npos)
      << a->text;
  f.observed.writes_below_full_stripe = 0.93;
  f.observed.writes_unaligned = 0.41;
  f.observed.source = "BPF histograms";
  const auto findings = Advise(f);
  a = Find(findings, "small_writes_on_parity_raid");
  ASSERT_NE(a, nullptr);
  EXPECT_NE(a->text.find("93 % of 10000 writes are smaller than the full stripe, 512 KiB "
                         "(BPF histograms); 41 % are not aligned to it"),
            std::string::npos)
      << a->text;
  f.observed.writes_below_full_stripe = 0.2;  // mostly full-stripe writes
  EXPECT_EQ(Find(Advise(f), "small_writes_on_parity_raid"), nullptr);
  f.disk = Md("raid10", 128, 4, 0x102);  // no parity: small writes are fine
  f.observed.writes_below_full_stripe.reset();
  EXPECT_EQ(Find(Advise(f), "small_writes_on_parity_raid"), nullptr);
}

BlockDevice Partition(std::string name, uint64_t start) {
  BlockDevice p;
  p.name = std::move(name);
  p.is_partition = true;
  p.start_sector = start;
  return p;
}

TEST(AdviseTest, PartitionAlignmentToThePhysicalBlockTheStripeAnd1MiB) {
  DeviceFacts f;
  f.disk.name = "sda";
  f.disk.queue.physical_block_size = 4096;
  f.partitions = {{Partition("sda1", 63), std::nullopt},
                  {Partition("sda2", 2048), std::nullopt},
                  {Partition("sda3", 4096 + 8), std::nullopt}};
  auto findings = Advise(f);
  ASSERT_EQ(findings.size(), 2u) << ::testing::PrintToString(Names(findings));
  EXPECT_EQ(findings[0].device, "sda1");
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_NE(findings[0].text.find("sda1 starts at sector 63 (32256 bytes), not a multiple of the "
                                  "physical block, 4 KiB"),
            std::string::npos)
      << findings[0].text;
  EXPECT_NE(findings[0].suggestion.find("(sector 2048)"), std::string::npos);
  EXPECT_EQ(findings[1].device, "sda3");
  EXPECT_EQ(findings[1].severity, Severity::kInfo);  // 4 KiB aligned, not 1 MiB
  // On an array, the stripe unit decides first.
  f.disk = Md("raid5", 512, 4);
  f.disk.name = "md0";
  f.partitions = {
      {Partition("md0p1", 2048), std::nullopt},   // 1 MiB: a multiple of 512 KiB
      {Partition("md0p2", 3072), std::nullopt}};  // 1.5 MiB: not of 1 MiB... but of 512 KiB
  findings = Advise(f);
  EXPECT_EQ(Find(findings, "partition_misaligned")->device, "md0p2");
  EXPECT_EQ(Find(findings, "partition_misaligned")->severity, Severity::kInfo);
  f.partitions = {{Partition("md0p1", 2048 + 256), std::nullopt}};  // 1 MiB + 128 KiB
  EXPECT_EQ(Find(Advise(f), "partition_misaligned")->severity, Severity::kWarning);
}

TEST(AdviseTest, FilesystemStripeHintsAgainstTheArray) {
  DeviceFacts f;
  f.disk = Md("raid5", 64, 5);  // 256 KiB full stripe
  f.filesystem = FsStripeHints{"ext4", 4096, 64 * kKiB, 256 * kKiB};
  EXPECT_EQ(Find(Advise(f), "fs_stripe_mismatch"), nullptr);  // as mke2fs would set it
  f.filesystem = FsStripeHints{"ext4", 4096, 0, 0};
  const auto found2 = Advise(f);
  const AdviceFinding* a = Find(found2, "fs_stripe_mismatch");
  ASSERT_NE(a, nullptr);
  EXPECT_NE(a->text.find("ext4 was made without stripe hints"), std::string::npos);
  EXPECT_EQ(a->suggestion, "tune2fs -E stride=16,stripe_width=64 /dev/md0");
  f.filesystem = FsStripeHints{"xfs", 4096, 128 * kKiB, 512 * kKiB};  // from an older array
  const auto findings = Advise(f);
  a = Find(findings, "fs_stripe_mismatch");
  ASSERT_NE(a, nullptr);
  EXPECT_NE(a->suggestion.find("mkfs.xfs -d su=64k,sw=4"), std::string::npos) << a->suggestion;
}

TEST(AdviseTest, ReadAheadFarFromTheAverageRead) {
  DeviceFacts f;
  f.disk.name = "sdb";
  f.disk.queue.read_ahead_kb = 128;
  f.observed = {"diskstats over 10 s", 5000, 0, 1024.0 * kKiB, 0, std::nullopt, std::nullopt};
  const auto found3 = Advise(f);
  const AdviceFinding* a = Find(found3, "read_ahead_mismatch");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->suggestion, "echo 1024 > /sys/block/sdb/queue/read_ahead_kb");
  f.disk.queue.read_ahead_kb = 8192;
  f.observed.average_read_bytes = 8 * kKiB;
  const auto found4 = Advise(f);
  a = Find(found4, "read_ahead_mismatch");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->suggestion, "echo 128 > /sys/block/sdb/queue/read_ahead_kb");
  f.observed.reads = 10;  // too few to say
  EXPECT_EQ(Find(Advise(f), "read_ahead_mismatch"), nullptr);
}

// The attributes advise reads, from a sysfs tree written here.
TEST(AdviseSysfsTest, MdGeometryQueueLimitsAndPartitionStartsAreRead) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const auto write = [&](const std::string& path, const std::string& text) {
    std::filesystem::create_directories(std::filesystem::path(dir.File(path)).parent_path());
    std::ofstream(dir.File(path)) << text << "\n";
  };
  for (const auto& [file, value] : {std::pair{"dev", "9:0"},
                                    {"size", "6291456"},
                                    {"stat", "1 0 8 0 2 0 16 0 0 0 0"},
                                    {"md/level", "raid6"},
                                    {"md/chunk_size", "131072"},
                                    {"md/raid_disks", "6"},
                                    {"md/layout", "2"},
                                    {"queue/physical_block_size", "4096"},
                                    {"queue/minimum_io_size", "131072"},
                                    {"queue/optimal_io_size", "524288"},
                                    {"queue/max_sectors_kb", "512"},
                                    {"queue/max_hw_sectors_kb", "2048"},
                                    {"queue/read_ahead_kb", "4096"},
                                    {"md0p1/partition", "1"},
                                    {"md0p1/dev", "259:1"},
                                    {"md0p1/start", "2049"},
                                    {"md0p1/size", "1000"},
                                    {"md0p1/stat", "0 0 0 0 0 0 0 0 0 0 0"}}) {
    write(std::string("block/md0/") + file, value);
  }
  const auto devices = DiscoverBlockDevices(FileTree(dir.path().string()));
  ASSERT_TRUE(devices) << devices.error().ToString();
  ASSERT_EQ(devices->size(), 2u);
  const BlockDevice& md = (*devices)[0];
  ASSERT_TRUE(md.md);
  EXPECT_EQ(md.md->layout, 2u);
  EXPECT_EQ(md.queue.minimum_io_size, 131072u);
  EXPECT_EQ(md.queue.max_hw_sectors_kb, 2048u);
  EXPECT_EQ((*devices)[1].start_sector, 2049u);
  DeviceFacts f{md, std::nullopt, {{(*devices)[1], std::nullopt}}, {}};
  const auto findings = Advise(f);
  EXPECT_EQ(Names(findings), (std::vector<std::string>{"partition_misaligned"}))
      << "512 KiB full stripe fits max_sectors_kb 512";
  EXPECT_EQ(findings[0].severity, Severity::kCritical);  // 2049 × 512 is not 4 KiB aligned
}

std::vector<uint8_t> Ext4Head(uint32_t log_block, uint16_t stride, uint32_t width) {
  std::vector<uint8_t> b(kSuperblockBytes, 0);
  const size_t s = 1024;
  b[s + 0x38] = 0x53;
  b[s + 0x39] = 0xEF;
  b[s + 0x18] = static_cast<uint8_t>(log_block);
  b[s + 0x164] = static_cast<uint8_t>(stride);
  b[s + 0x165] = static_cast<uint8_t>(stride >> 8);
  for (int i = 0; i < 4; ++i) b[s + 0x170 + i] = static_cast<uint8_t>(width >> (8 * i));
  return b;
}

TEST(FsStripeHintsTest, Ext4AndXfsSuperblocks) {
  EXPECT_EQ(ParseFsStripeHints(Ext4Head(2, 16, 48)),
            (FsStripeHints{"ext4", 4096, 64 * kKiB, 192 * kKiB}));
  std::vector<uint8_t> xfs(512, 0);
  const char magic[] = "XFSB";
  std::copy(magic, magic + 4, xfs.begin());
  xfs[6] = 0x10;   // sb_blocksize 4096, big-endian
  xfs[187] = 32;   // sb_unit: 32 blocks
  xfs[191] = 128;  // sb_width: 128 blocks
  EXPECT_EQ(ParseFsStripeHints(xfs), (FsStripeHints{"xfs", 4096, 128 * kKiB, 512 * kKiB}));
  EXPECT_FALSE(ParseFsStripeHints(std::vector<uint8_t>(4096, 0)));
  EXPECT_FALSE(ParseFsStripeHints(Ext4Head(9, 1, 1)));  // no such block size
  EXPECT_FALSE(ParseFsStripeHints({}));
  const auto missing = ReadFsStripeHints("/nonexistent/dev");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().path, "/nonexistent/dev");
}

}  // namespace
}  // namespace iowatch::advice
