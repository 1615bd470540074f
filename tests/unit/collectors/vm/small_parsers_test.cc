// uptime, /proc/stat, /proc/meminfo, /proc/vmstat.
#include <gtest/gtest.h>

#include "collectors/vm/meminfo.h"
#include "collectors/vm/proc_stat.h"
#include "collectors/vm/proc_vmstat.h"
#include "collectors/vm/uptime.h"
#include "common/file_tree.h"
#include "tests/unit/source_tree.h"

namespace iowatch::collectors {
namespace {

TEST(ParseUptime, CentisecondsFromTheFirstField) {
  EXPECT_EQ(ParseUptimeCentiseconds("94.72 127.17\n", "uptime").value(), 9472u);
  EXPECT_EQ(ParseUptimeCentiseconds("5000000.05 1.00\n", "uptime").value(), 500000005u);
  EXPECT_EQ(ParseUptimeCentiseconds("12 0\n", "uptime").value(), 1200u);
}

TEST(ParseUptime, GarbageIsAnErrorThatNamesFileAndValue) {
  const auto r = ParseUptimeCentiseconds("abc 1\n", "/proc/uptime");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().ToString(),
            "/proc/uptime:1: expected '<seconds>.<centiseconds>', found 'abc'");
  EXPECT_FALSE(ParseUptimeCentiseconds("", "u").has_value());
  EXPECT_FALSE(ParseUptimeCentiseconds("1.234 0", "u").has_value());
  EXPECT_FALSE(ParseUptimeCentiseconds("-1.00 0", "u").has_value());
}

TEST(ParseProcStat, AllFieldsOfAModernKernel) {
  const auto stat = ParseProcStat(
      "cpu  10 20 30 40 50 60 70 80 90 100\n"
      "cpu0 1 2 3 4 5 6 7 8 9 10\n"
      "cpu1 11 12 13 14 15 16 17 18 19 20\n"
      "intr 12345 0 1 2\n"
      "ctxt 6789\n"
      "btime 1700000000\n"
      "processes 4242\n"
      "procs_running 3\n"
      "procs_blocked 1\n"
      "softirq 5 1 1 1\n",
      "stat");
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->total, (CpuTicks{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}));
  ASSERT_EQ(stat->per_cpu.size(), 2u);
  EXPECT_EQ(stat->per_cpu[1].guest_nice, 20u);
  EXPECT_EQ(stat->interrupts, 12345u);
  EXPECT_EQ(stat->context_switches, 6789u);
  EXPECT_EQ(stat->boot_time, 1700000000u);
  EXPECT_EQ(stat->forks, 4242u);
  EXPECT_EQ(stat->procs_running, 3u);
  EXPECT_EQ(stat->procs_blocked, 1u);
}

TEST(ParseProcStat, OldKernelWithFourCpuColumns) {
  const auto stat = ParseProcStat("cpu 1 2 3 4\nintr 9\n", "stat");
  ASSERT_TRUE(stat.has_value());
  EXPECT_EQ(stat->total, (CpuTicks{1, 2, 3, 4, 0, 0, 0, 0, 0, 0}));
}

TEST(ParseProcStat, MissingOrMalformedCpuLineIsAnError) {
  const auto missing = ParseProcStat("intr 9\n", "/proc/stat");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().ToString(), "/proc/stat: expected a 'cpu' line, found none");
  const auto bad = ParseProcStat("cpu 1 2 x 4\n", "/proc/stat");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().line, 1);
}

TEST(ParseMeminfo, ValuesUnitsAndOrder) {
  const auto m = ParseMeminfo(
      "MemTotal:       24562124 kB\nMemFree:        23392892 kB\nHugePages_Total:       0\n"
      "broken line\nSwapTotal: x kB\n",
      "/proc/meminfo");
  ASSERT_EQ(m.values.entries.size(), 3u);
  EXPECT_EQ(m.values.entries[0].first, "MemTotal");
  EXPECT_EQ(m.values.Get("MemFree"), 23392892u);
  EXPECT_EQ(m.in_kib, (std::vector<bool>{true, true, false}));
  EXPECT_FALSE(m.values.Get("SwapTotal").has_value());
  ASSERT_EQ(m.values.skipped.size(), 2u);
  EXPECT_EQ(m.values.skipped[0].line, 4);
  EXPECT_EQ(m.values.skipped[1].ToString(),
            "/proc/meminfo:5: expected 'Name: <unsigned> [kB]', found 'SwapTotal: x kB'");
}

TEST(ParseProcVmstat, PairsAndSkippedLines) {
  const auto v = ParseProcVmstat("nr_free_pages 5848223\npgpgin 3811\nbad\npswpin 7 8\n", "vmstat");
  ASSERT_EQ(v.entries.size(), 2u);
  EXPECT_EQ(v.Get("pgpgin"), 3811u);
  EXPECT_EQ(v.GetOr("pswpin", 42), 42u);
  EXPECT_EQ(v.skipped.size(), 2u);
}

TEST(RealFixtures, EveryLineOfThisMachinesFilesParses) {
  FileTree procfs(iowatch::testing::FixturesDir() + "/real-vm/proc");
  const auto meminfo = ParseMeminfo(procfs.Read("meminfo").value(), "meminfo");
  EXPECT_TRUE(meminfo.values.skipped.empty());
  EXPECT_TRUE(meminfo.values.Get("MemTotal").has_value());
  EXPECT_TRUE(meminfo.values.Get("SReclaimable").has_value());
  const auto vmstat = ParseProcVmstat(procfs.Read("vmstat").value(), "vmstat");
  EXPECT_TRUE(vmstat.skipped.empty());
  EXPECT_TRUE(vmstat.Get("pgpgin").has_value());
  const auto stat = ParseProcStat(procfs.Read("stat").value(), "stat");
  ASSERT_TRUE(stat.has_value());
  EXPECT_GT(stat->total.idle, 0u);
  EXPECT_GT(stat->context_switches, 0u);
  EXPECT_TRUE(ParseUptimeCentiseconds(procfs.Read("uptime").value(), "uptime").has_value());
}

}  // namespace
}  // namespace iowatch::collectors
