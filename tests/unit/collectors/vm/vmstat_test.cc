#include "collectors/vm/vmstat.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/unit/source_tree.h"

namespace iowatch::collectors {
namespace {

TEST(ConvertKib, ThirtyTwoBitFloatLikeProcps) {
  EXPECT_EQ(ConvertKib(16777216, 1024), 16777216u);
  EXPECT_EQ(ConvertKib(16777217, 1024), 16777216u);  // 2^24 + 1 is not a float
  EXPECT_EQ(ConvertKib(123456789, 1024), 123456792u);
  EXPECT_EQ(ConvertKib(24148444, 1000), 24728006u);  // -S k
  EXPECT_EQ(ConvertKib(24148444, 1000000), 24728u);  // -S m
  EXPECT_EQ(ConvertKib(24148444, 1048576), 23582u);  // -S M
  EXPECT_EQ(ConvertKib(UINT64_MAX, 1024), 0u);       // what procps prints on x86-64
}

VmSample SampleWith(CpuTicks cpu, uint64_t intr, uint64_t ctxt, uint64_t pgpgin) {
  VmSample s;
  s.stat.total = cpu;
  s.stat.interrupts = intr;
  s.stat.context_switches = ctxt;
  s.stat.procs_running = 3;
  s.stat.procs_blocked = 1;
  s.vmstat.entries = {{"pgpgin", pgpgin}, {"pgpgout", 0}, {"pswpin", 3}, {"pswpout", 0}};
  s.meminfo.entries = {{"MemFree", 1000}, {"SwapTotal", 100},  {"SwapFree", 150}, {"Buffers", 10},
                       {"Cached", 20},    {"SReclaimable", 5}, {"Active", 7},     {"Inactive", 8}};
  return s;
}

TEST(ComputeVmstat, SinceBootIsPerCpuJiffyAverage) {
  // Div = 1000 jiffies (user+nice+sys+irq+softirq+idle+iowait+steal), guest inside user.
  const VmSample s = SampleWith({300, 0, 100, 500, 50, 0, 0, 50, 100, 0}, 5000, 9000, 2000);
  const VmstatColumns c = ComputeVmstatSinceBoot(s, VmstatParams{});
  EXPECT_EQ(c.r, 3u);
  EXPECT_EQ(c.b, 1u);
  EXPECT_EQ(c.swpd, 0u);    // SwapFree above SwapTotal never goes negative
  EXPECT_EQ(c.cache, 25u);  // Cached + SReclaimable
  EXPECT_EQ(c.in, 500u);    // (5000 * 100 + 500) / 1000
  EXPECT_EQ(c.cs, 900u);
  EXPECT_EQ(c.bi, 200u);
  EXPECT_EQ(c.si, 1u);   // (3 pages * 4 KiB * 100 + 500) / 1000
  EXPECT_EQ(c.us, 20u);  // (300 - 100 guest) / 1000
  EXPECT_EQ(c.sy, 10u);
  EXPECT_EQ(c.id, 50u);
  EXPECT_EQ(c.wa, 5u);
  EXPECT_EQ(c.st, 5u);
  EXPECT_EQ(c.gu, 10u);
}

TEST(ComputeVmstat, IntervalDividesDeltasByTheNominalDelay) {
  const VmSample a = SampleWith({300, 0, 100, 500, 50, 0, 0, 50, 100, 0}, 5000, 9000, 2000);
  const VmSample b = SampleWith({450, 0, 130, 700, 60, 0, 0, 60, 160, 0}, 5301, 9700, 2500);
  const VmstatColumns c = ComputeVmstatInterval(a, b, 2, VmstatParams{});
  EXPECT_EQ(c.in, 151u);  // (301 + 1) / 2
  EXPECT_EQ(c.cs, 350u);
  EXPECT_EQ(c.bi, 250u);
  EXPECT_EQ(c.si, 0u);
  EXPECT_EQ(c.us, 23u);  // (150 - 60) of 400, rounded half up
  EXPECT_EQ(c.sy, 8u);
  EXPECT_EQ(c.id, 50u);
  EXPECT_EQ(c.gu, 15u);
}

TEST(ComputeVmstat, NoTicksReadsAsFullyIdle) {
  const VmSample a = SampleWith({}, 0, 0, 0);
  const VmstatColumns c = ComputeVmstatInterval(a, a, 1, VmstatParams{});
  EXPECT_EQ(c.id, 100u);
  EXPECT_EQ(c.us + c.sy + c.wa + c.st, 0u);
  EXPECT_EQ(ComputeVmstatSinceBoot(a, VmstatParams{}).id, 100u);
}

TEST(ReadVmSample, MissingFileIsAnErrorNamingIt) {
  const auto r = ReadVmSample(FileTree("/nonexistent"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().path, "/nonexistent/stat");
}

// Adversarial test: an empty meminfo printed zeros and exit 0;
// procps 4.0.2 fails ("Unable to create meminfo structure"), as iowatch now.
TEST(ReadVmSample, AMeminfoWithoutASingleLineIsAnError) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("iowatch-vmstat-" + std::to_string(getpid()));
  std::filesystem::create_directories(root);
  std::filesystem::copy_file(iowatch::testing::FixturesDir() + "/real-vm/proc/stat", root / "stat");
  std::filesystem::copy_file(iowatch::testing::FixturesDir() + "/real-vm/proc/vmstat",
                             root / "vmstat");
  std::ofstream(root / "meminfo").close();
  const auto empty = ReadVmSample(FileTree(root));
  std::ofstream(root / "meminfo") << "garbage\n";
  const auto garbage = ReadVmSample(FileTree(root));
  std::ofstream(root / "meminfo") << "Foo: 1 kB\n";  // procps accepts this, prints zeros
  const auto foo = ReadVmSample(FileTree(root));
  std::filesystem::remove_all(root);
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().ToString(),
            (root / "meminfo").string() + ": expected 'Name: <unsigned> [kB]' lines, found none");
  ASSERT_FALSE(garbage.has_value());
  EXPECT_EQ(garbage.error().ToString(), (root / "meminfo").string() +
                                            ": expected 'Name: <unsigned> [kB]' lines, found only "
                                            "malformed ones");
  EXPECT_TRUE(foo.has_value());
}

}  // namespace
}  // namespace iowatch::collectors
