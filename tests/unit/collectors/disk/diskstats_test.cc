#include "collectors/disk/diskstats.h"

#include <gtest/gtest.h>

#include "common/file_tree.h"
#include "tests/unit/source_tree.h"

namespace iowatch::collectors {
namespace {

TEST(ParseDiskstats, TwentyFieldLineKernel55) {
  const auto parsed = ParseDiskstats(
      " 254       0 vda 5653 3335 523298 7282 810 1527 225840 2832 0 4204 10518 3651 52 79408 396 "
      "102 6\n",
      "diskstats");
  ASSERT_TRUE(parsed.skipped.empty());
  ASSERT_EQ(parsed.disks.size(), 1u);
  const DiskStat& d = parsed.disks[0];
  EXPECT_EQ(d.major, 254u);
  EXPECT_EQ(d.minor, 0u);
  EXPECT_EQ(d.name, "vda");
  const DiskCounters& c = d.counters;
  EXPECT_EQ(c.field_count, 17);
  EXPECT_EQ(c.reads, 5653u);
  EXPECT_EQ(c.reads_merged, 3335u);
  EXPECT_EQ(c.read_sectors, 523298u);
  EXPECT_EQ(c.read_ms, 7282u);
  EXPECT_EQ(c.writes, 810u);
  EXPECT_EQ(c.writes_merged, 1527u);
  EXPECT_EQ(c.write_sectors, 225840u);
  EXPECT_EQ(c.write_ms, 2832u);
  EXPECT_EQ(c.in_flight, 0u);
  EXPECT_EQ(c.io_ms, 4204u);
  EXPECT_EQ(c.weighted_io_ms, 10518u);
  EXPECT_EQ(c.discards, 3651u);
  EXPECT_EQ(c.discards_merged, 52u);
  EXPECT_EQ(c.discard_sectors, 79408u);
  EXPECT_EQ(c.discard_ms, 396u);
  EXPECT_EQ(c.flushes, 102u);
  EXPECT_EQ(c.flush_ms, 6u);
}

TEST(ParseDiskstats, EighteenFieldLineKernel418HasDiscardsButNoFlushes) {
  const auto parsed =
      ParseDiskstats("   8       0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n", "diskstats");
  ASSERT_EQ(parsed.disks.size(), 1u);
  EXPECT_EQ(parsed.disks[0].counters.field_count, 15);
  EXPECT_EQ(parsed.disks[0].counters.discard_ms, 15u);
  EXPECT_EQ(parsed.disks[0].counters.flushes, 0u);
}

TEST(ParseDiskstats, FourteenFieldLineOldKernel) {
  const auto parsed = ParseDiskstats("   8  16 sdb 1 2 3 4 5 6 7 8 9 10 11\n", "diskstats");
  ASSERT_EQ(parsed.disks.size(), 1u);
  EXPECT_EQ(parsed.disks[0].counters.field_count, 11);
  EXPECT_TRUE(parsed.disks[0].counters.HasExtendedFields());
  EXPECT_EQ(parsed.disks[0].counters.weighted_io_ms, 11u);
  EXPECT_EQ(parsed.disks[0].counters.discards, 0u);
}

TEST(ParseDiskstats, SevenFieldPartitionLineOfKernelsBefore2625) {
  const auto parsed = ParseDiskstats("   3    1 hda1 35486 38030 38030 38030\n", "diskstats");
  ASSERT_EQ(parsed.disks.size(), 1u);
  const DiskCounters& c = parsed.disks[0].counters;
  EXPECT_EQ(c.field_count, 4);
  EXPECT_FALSE(c.HasExtendedFields());
  EXPECT_EQ(c.reads, 35486u);
  EXPECT_EQ(c.read_sectors, 38030u);
  EXPECT_EQ(c.writes, 38030u);
  EXPECT_EQ(c.write_sectors, 38030u);
}

TEST(ParseDiskstats, FutureKernelExtraFieldsAreIgnored) {
  const auto parsed =
      ParseDiskstats(" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19\n", "diskstats");
  ASSERT_EQ(parsed.disks.size(), 1u);
  EXPECT_EQ(parsed.disks[0].counters.field_count, 17);
  EXPECT_EQ(parsed.disks[0].counters.flush_ms, 17u);
}

TEST(ParseDiskstats, Huge64BitCountersSurvive) {
  const auto parsed = ParseDiskstats(
      " 259 0 nvme0n1 18446744073709551615 0 18446744073709551000 4294967295 0 0 0 0 0 0 0\n",
      "diskstats");
  ASSERT_EQ(parsed.disks.size(), 1u);
  EXPECT_EQ(parsed.disks[0].counters.reads, 18446744073709551615u);
  EXPECT_EQ(parsed.disks[0].counters.read_sectors, 18446744073709551000u);
  EXPECT_EQ(parsed.disks[0].counters.read_ms, 4294967295u);
}

TEST(ParseDiskstats, MalformedLinesAreSkippedWithTheirLineNumberAndTheRestIsKept) {
  const std::string text =
      "   8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n"
      "   8 1 sda1 1 2 3 4 5 6 x 8 9 10 11\n"        // garbage number
      "   8 2 sda2 1 2 3 4 5\n"                      // truncated
      "garbage\n"                                    // no fields to speak of
      "   a b sdc 1 2 3 4 5 6 7 8 9 10 11\n"         // non-numeric major/minor
      "   8 3 sda3 1 2 3 4 5 6 7 8 9 10 11 12 13\n"  // 13: no kernel prints this
      "\n"
      " 253 0 dm-0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n";
  const auto parsed = ParseDiskstats(text, "/proc/diskstats");
  ASSERT_EQ(parsed.disks.size(), 2u);
  EXPECT_EQ(parsed.disks[0].name, "sda");
  EXPECT_EQ(parsed.disks[1].name, "dm-0");
  ASSERT_EQ(parsed.skipped.size(), 5u);
  EXPECT_EQ(parsed.skipped[0].line, 2);
  EXPECT_EQ(parsed.skipped[0].ToString(),
            "/proc/diskstats:2: counter 7 is 'x', expected an unsigned integer");
  EXPECT_EQ(parsed.skipped[1].line, 3);
  EXPECT_EQ(parsed.skipped[1].ToString(),
            "/proc/diskstats:3: expected 4, 11, 15 or 17 counters, found 5");
  EXPECT_EQ(parsed.skipped[2].line, 4);
  EXPECT_EQ(parsed.skipped[3].line, 5);
  EXPECT_EQ(parsed.skipped[4].line, 6);
}

TEST(ParseDiskstats, NegativeNumbersAreRejected) {
  const auto parsed = ParseDiskstats(" 8 0 sda -1 2 3 4 5 6 7 8 9 10 11\n", "d");
  EXPECT_TRUE(parsed.disks.empty());
  EXPECT_EQ(parsed.skipped.size(), 1u);
}

// Adversarial test: a 50,000-byte name overflowed std::regex's
// stack in the device filter. Names longer than NAME_MAX are no kernel's.
TEST(ParseDiskstats, NamesLongerThanNameMaxAreMalformed) {
  const std::string longest(255, 'n');
  const std::string text = " 8 0 " + longest + " 1 2 3 4 5 6 7 8 9 10 11\n 8 1 " +
                           std::string(50'000, 'n') + " 1 2 3 4 5 6 7 8 9 10 11\n";
  const auto parsed = ParseDiskstats(text, "/proc/diskstats");
  ASSERT_EQ(parsed.disks.size(), 1u);
  EXPECT_EQ(parsed.disks[0].name, longest);
  ASSERT_EQ(parsed.skipped.size(), 1u);
  EXPECT_EQ(parsed.skipped[0].ToString(),
            "/proc/diskstats:2: expected a device name of at most 255 bytes, found one of 50000");
}

TEST(ParseDiskCounters, SysfsStatFileWithSeventeenFields) {
  const auto c = ParseDiskCounters(
      "     100        0     2000      300       50        0      800       40        0      320 "
      "      340        0        0        0        0        7        2\n",
      "block/sda/stat");
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->field_count, 17);
  EXPECT_EQ(c->reads, 100u);
  EXPECT_EQ(c->flushes, 7u);
}

TEST(ParseDiskCounters, EmptyFileIsAnErrorNamingTheFile) {
  const auto c = ParseDiskCounters("", "block/sda/stat");
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().ToString(), "block/sda/stat:1: expected 4, 11, 15 or 17 counters, found 0");
}

TEST(ParseDiskstats, RealFileOfThisMachineParsesCompletely) {
  FileTree procfs(iowatch::testing::FixturesDir() + "/real-vm/proc");
  const auto text = procfs.Read("diskstats");
  ASSERT_TRUE(text.has_value()) << text.error().ToString();
  const auto parsed = ParseDiskstats(*text, "diskstats");
  EXPECT_TRUE(parsed.skipped.empty());
  ASSERT_GE(parsed.disks.size(), 1u);
  bool saw_vda = false;
  for (const auto& d : parsed.disks) {
    EXPECT_EQ(d.counters.field_count, 17) << d.name;
    saw_vda |= d.name == "vda";
  }
  EXPECT_TRUE(saw_vda);
}

}  // namespace
}  // namespace iowatch::collectors
