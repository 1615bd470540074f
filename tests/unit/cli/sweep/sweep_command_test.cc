// `iowatch sweep` run whole (RunSweep) against a state directory of its own:
// a sweep that measured nothing is not stored, and the names a sweep
// prints (its target, device and identity, from the user and from sysfs)
// reach the terminal escaped.
#include "cli/sweep/sweep_command.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "probes/store/store.h"
#include "probes/sweep/sweep_report.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

using iowatch::testing::TempDir;

struct Ran {
  int status = 0;
  std::string out;
  std::string err;
};

Ran Sweep(const std::vector<std::string>& args) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  Ran ran;
  ran.status = RunSweep(GlobalOptions{}, args);
  ran.out = ::testing::internal::GetCapturedStdout();
  ran.err = ::testing::internal::GetCapturedStderr();
  return ran;
}

std::vector<probes::SweepRecord> Stored(const std::filesystem::path& state) {
  auto store = probes::Store::OpenReadOnly(state / probes::Store::kFileName);
  EXPECT_TRUE(store) << store.error().ToString();
  if (!store) return {};
  auto sweeps = store->ListSweeps();
  EXPECT_TRUE(sweeps) << sweeps.error().ToString();
  return sweeps.value_or(std::vector<probes::SweepRecord>{});
}

TEST(SweepCommand, ASweepWhoseEveryPointFailedIsNotStored) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string state = dir.File("state");
  std::filesystem::create_directory(state);
  // A target that does not exist, without a size to create it: every point fails.
  const std::string target = dir.File("missing\x1b[2J");
  const Ran ran =
      Sweep({"--filename=" + target, "--bs=4k,8k", "--iodepth=1", "--rw=read", "--pattern=random",
             "--mode=direct", "--budget=2s", "--state.dir=" + state});
  EXPECT_EQ(ran.status, 1);
  EXPECT_NE(ran.err.find("iowatch sweep: not stored: no point completed (2 failed, 0 skipped)"),
            std::string::npos)
      << ran.err;
  EXPECT_EQ(ran.err.find("stored as sweep"), std::string::npos) << ran.err;
  EXPECT_TRUE(Stored(state).empty());
  // The table names the target as a terminal may show it.
  EXPECT_NE(ran.out.find("sweep of " + dir.File("missing\\x1b[2J")), std::string::npos) << ran.out;
  EXPECT_EQ(ran.out.find('\x1b'), std::string::npos) << ran.out;
  // And so does each point's error (ReportError).
  EXPECT_NE(ran.err.find("iowatch sweep: " + dir.File("missing\\x1b[2J") + ": "), std::string::npos)
      << ran.err;
  EXPECT_EQ(ran.err.find('\x1b'), std::string::npos) << ran.err;
}

TEST(SweepCommand, ListAndCompareShowNamesEscaped) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  {
    auto store = probes::Store::OpenInStateDir(dir.path());
    ASSERT_TRUE(store) << store.error().ToString();
    probes::SweepReport report;
    report.target = "/srv/x\x1b]0;PWNED\a";
    report.device = "sd\x1b[2J";
    report.identity = "Model\rS1\xff";
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(store->AddSweep(
          {0, 0, report.device, report.identity, report.target, probes::SweepJson(report)}));
    }
  }
  const Ran listed = Sweep({"--list", "--state.dir=" + dir.path().string()});
  ASSERT_EQ(listed.status, 0) << listed.err;
  EXPECT_NE(listed.out.find("sd\\x1b[2J"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("Model\\x0dS1\\xff"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("/srv/x\\x1b]0;PWNED\\x07"), std::string::npos) << listed.out;
  const Ran compared = Sweep({"--compare", "1", "2", "--state.dir=" + dir.path().string()});
  ASSERT_EQ(compared.status, 0) << compared.err;
  // The report's JSON holds the identity as valid UTF-8 (0xff became U+FFFD).
  EXPECT_NE(compared.out.find("sd\\x1b[2J Model\\x0dS1\xEF\xBF\xBD (/srv/x\\x1b]0;PWNED\\x07)"),
            std::string::npos)
      << compared.out;
  for (const std::string& out : {listed.out, compared.out}) {
    for (const char raw : {'\x1b', '\a', '\r', '\xff'}) {
      EXPECT_EQ(out.find(raw), std::string::npos) << out;
    }
  }
}

}  // namespace
}  // namespace iowatch::daemon
