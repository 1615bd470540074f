// Drives VmstatSession with the samples of tests/fixtures/vmstat-steps and
// compares with what procps-ng 4.0.2 printed for them.
#include "cli/vmstat/vmstat_session.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/unit/source_tree.h"

namespace iowatch::daemon {
namespace {

const std::string kDir = iowatch::testing::FixturesDir() + "/vmstat-steps";

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line + "\n");
  return lines;
}

collectors::VmSample Step(int n) {
  auto sample = collectors::ReadVmSample(FileTree(kDir + "/step" + std::to_string(n) + "/proc"));
  EXPECT_TRUE(sample.has_value()) << sample.error().ToString();
  return std::move(*sample);
}

std::string FixedTime(const char* format) {
  const std::string f = format;
  static int calls = 0;
  if (f == "%Z") return "UTC";
  return f == "%Y-%m-%d %H:%M:%S" ? "2024-01-02 03:04:0" + std::to_string(5 + 2 * (calls++ % 3))
                                  : "";
}

VmstatSession MakeSession(const std::vector<std::string>& args) {
  auto opts = ParseVmstatArgs(args);
  EXPECT_TRUE(opts.has_value());
  collectors::VmstatParams params;  // HZ 100, 4 KiB pages, KiB: the capture machine's
  return VmstatSession(*opts, params, 21, FixedTime);
}

TEST(VmstatSession, FirstTwoLinesAreProcpsExceptMemoryWhichIsReRead) {
  const auto procps = Lines(kDir + "/procps-vmstat-2-3.txt");
  ASSERT_EQ(procps.size(), 5u);
  VmstatSession session = MakeSession({"2", "3"});
  EXPECT_EQ(session.IntervalLines(), 2u);
  EXPECT_EQ(session.DelaySeconds(), 2u);
  EXPECT_EQ(session.Start(Step(0)), procps[0] + procps[1] + procps[2]);
  // procps 4.0.2 repeats step0's memory; MemFree really changed to 5555555 in step1.
  std::string second = procps[3];
  second.replace(second.find("1000000"), 7, "5555555");
  EXPECT_EQ(session.Next(Step(1)), second);
}

TEST(VmstatSession, CountersGoingBackwardsGiveZeroNotWrappedRates) {
  VmstatSession session = MakeSession({"2", "3"});
  session.Start(Step(0));
  session.Next(Step(1));
  // procps prints "0 0 4294966797 0 2147483498 2147483298  0  0 100  0  0" here.
  EXPECT_EQ(session.Next(Step(2)),
            " 0  0      0 7777777  10700 414168    0    0     0     0    0    0  0  0 100  0  0\n");
}

TEST(VmstatSession, WideWithTimestampsMatchesProcps) {
  const auto procps = Lines(kDir + "/procps-vmstat-w-t-2-3.txt");
  ASSERT_EQ(procps.size(), 5u);
  VmstatSession session = MakeSession({"-w", "-t", "2", "3"});
  EXPECT_EQ(session.Start(Step(0)), procps[0] + procps[1] + procps[2]);
  std::string second = procps[3];
  second.replace(second.find("1000000"), 7, "5555555");
  EXPECT_EQ(session.Next(Step(1)), second);
}

TEST(VmstatSession, HeaderRepeatsEveryIntervalUnlessOneHeader) {
  auto count_headers = [](const std::vector<std::string>& args) {
    auto opts = ParseVmstatArgs(args);
    VmstatSession session(*opts, collectors::VmstatParams{}, 3, FixedTime);
    std::string out = session.Start(Step(0));
    for (int i = 0; i < 7; ++i) out += session.Next(Step(1));
    size_t headers = 0;
    for (size_t pos = 0; (pos = out.find("procs", pos)) != std::string::npos; ++pos) ++headers;
    return headers;
  };
  EXPECT_EQ(count_headers({"1"}), 3u);  // before line 0, 3 and 6
  EXPECT_EQ(count_headers({"-n", "1"}), 1u);
}

TEST(VmstatSession, SkipSinceBootPrintsOnlyIntervalLines) {
  VmstatSession session = MakeSession({"-y", "2", "2"});
  EXPECT_EQ(session.IntervalLines(), 2u);
  const std::string start = session.Start(Step(0));
  EXPECT_EQ(std::count(start.begin(), start.end(), '\n'), 2);  // the header only
  EXPECT_EQ(MakeSession({"-y"}).IntervalLines(), 1u);
  EXPECT_EQ(MakeSession({}).IntervalLines(), 0u);
  EXPECT_FALSE(MakeSession({"5"}).IntervalLines().has_value());
}

}  // namespace
}  // namespace iowatch::daemon
