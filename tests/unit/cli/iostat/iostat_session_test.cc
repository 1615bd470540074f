// Replays the cases of tests/fixtures/iostat-two-samples through IostatSession
// and requires exactly what sysstat 12.6.1 printed for the same samples.
#include "cli/iostat/iostat_session.h"

#include <gtest/gtest.h>

#include <ctime>
#include <fstream>
#include <sstream>

#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

const std::string kDir = iowatch::testing::FixturesDir() + "/iostat-two-samples";

using iowatch::testing::ReadFile;

IostatSample Sample(const std::string& name) {
  auto sample =
      ReadIostatSample(FileTree(kDir + "/" + name + "/proc"), FileTree(kDir + "/" + name + "/sys"));
  EXPECT_TRUE(sample.has_value()) << sample.error().ToString();
  return std::move(*sample);
}

// The clock of the capture: 2024-03-05 14:07:09 UTC, two seconds per report.
class FakeClock {
 public:
  std::string Format(const char* format) const {
    std::tm tm{};
    const std::time_t t = now_;
    gmtime_r(&t, &tm);
    char buffer[64];
    return std::string(buffer, std::strftime(buffer, sizeof buffer, format, &tm));
  }
  void Advance(int seconds) { now_ += seconds; }

 private:
  std::time_t now_ = 1709647629;
};

struct Case {
  const char* name;
  std::vector<std::string> args;
  bool posixly_correct = false;
};

// Names the case in test listings instead of dumping its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string Replay(const Case& c, FakeClock& clock) {
  auto opts = ParseIostatArgs(c.args);
  EXPECT_TRUE(opts.has_value());
  const HostInfo host{"Linux", "fixturehost", "6.18.44-fc-v657", "x86_64", 2};
  IostatSession session(
      *opts, host, [&clock](const char* f) { return clock.Format(f); }, c.posixly_correct, false);
  std::string out = session.Start(Sample("s1"));
  if (opts->interval_s) {
    clock.Advance(2);
    out += session.Next(Sample("s2"));
  }
  return out + session.Finish();
}

class SysstatReference : public ::testing::TestWithParam<Case> {};

TEST_P(SysstatReference, SameBytesAsSysstat) {
  const Case& c = GetParam();
  FakeClock clock;
  const std::string expected = ReadFile(kDir + "/sysstat/" + c.name + ".txt");
  ASSERT_FALSE(expected.empty()) << c.name;
  EXPECT_EQ(Replay(c, clock), expected)
      << "case " << c.name << ": iostat " << ReadFile(kDir + "/sysstat/" + c.name + ".cmd");
}

INSTANTIATE_TEST_SUITE_P(
    TwoSamples, SysstatReference,
    ::testing::Values(
        Case{"r2_default", {"2", "2"}}, Case{"r2_x", {"-x", "2", "2"}},
        Case{"r2_c", {"-c", "2", "2"}}, Case{"r2_d", {"-d", "2", "2"}},
        Case{"r2_t", {"-t", "2", "2"}}, Case{"r2_y", {"-y", "2", "1"}},
        Case{"r2_y_x", {"-y", "-x", "2", "1"}}, Case{"r2_y_c", {"-y", "-c", "2", "1"}},
        Case{"r2_z", {"-z", "2", "2"}}, Case{"r2_pALL_x", {"-p", "ALL", "-x", "2", "2"}},
        Case{"r2_json", {"-o", "JSON", "2", "2"}},
        Case{"r2_json_x_t", {"-o", "JSON", "-x", "-t", "2", "2"}},
        Case{"r2_json_y", {"-o", "JSON", "-y", "2", "1"}},
        Case{"r2_json_c", {"-o", "JSON", "-c", "2", "2"}},
        Case{"r2_json_d", {"-o", "JSON", "-d", "2", "2"}}, Case{"default", {}}, Case{"x", {"-x"}},
        Case{"x_m", {"-x", "-m"}}, Case{"d_m", {"-d", "-m"}}, Case{"c", {"-c"}},
        Case{"t_x", {"-t", "-x"}}, Case{"json", {"-o", "JSON"}},
        Case{"json_x", {"-o", "JSON", "-x"}}, Case{"json_xm", {"-o", "JSON", "-x", "-m"}},
        Case{"json_c", {"-o", "JSON", "-c"}}, Case{"json_t", {"-o", "JSON", "-t"}},
        Case{"pALL_x", {"-x", "-p", "ALL"}}, Case{"p_only", {"-p"}}, Case{"p_sda", {"-p", "sda"}},
        Case{"p_sda_nvme", {"-p", "sda,nvme0n1"}}, Case{"N", {"-N"}},
        Case{"N_mapname", {"-N", "vg0-root"}}, Case{"z", {"-z"}},
        Case{"devs_order", {"sdb", "dm-0", "sda"}}, Case{"devs_part", {"sda1", "sda"}},
        Case{"devs_missing", {"sdz", "sda"}}, Case{"devs_ALL_x", {"-x", "ALL"}},
        Case{"nodev", {"-d", "sdz"}}, Case{"posix_x", {"-x"}, true}, Case{"posix_d", {"-d"}, true},
        Case{"json_posix_x", {"-o", "JSON", "-x"}, true}),
    [](const ::testing::TestParamInfo<Case>& param) { return std::string(param.param.name); });

}  // namespace
}  // namespace iowatch::daemon
