// `iowatch trace`'s report and its what-if's scratch directory, against what
// a traced program can do to them: the processes that wrote no report, the
// JSON document of a command that is not UTF-8, the traced run's reads beside
// their cold replay, and the scratch directory swapped for a symlink while
// the replays run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/trace/scratch_directory.h"
#include "cli/trace/trace_output.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

TEST(TraceOutput, ProcessesThatWroteNoReportAreNamed) {
  TraceRun run;
  run.command = {"prog"};
  run.unreported.push_back({42, 1, "/bin/prog"});
  const std::string text = TraceText(run);
  EXPECT_NE(text.find("iowatch trace: pid 42 (parent 1) /bin/prog wrote no report: it ended by a "
                      "signal or _exit(), exec'd a program the library does not follow (static or "
                      "set-user-ID), or could not write its report"),
            std::string::npos)
      << text;
  const auto doc = nlohmann::json::parse(TraceJson(run));
  ASSERT_EQ(doc["unreported"].size(), 1u);
  EXPECT_EQ(doc["unreported"][0]["pid"], 42);
}

// A word of the command that is not UTF-8 made the JSON writer throw: exit
// 70 instead of the command's status.
TEST(TraceOutput, ACommandThatIsNotUtf8MakesValidJson) {
  TraceRun run;
  run.command = {"prog", "/data/\xff.dat"};
  run.exit_status = 3;
  const auto doc = nlohmann::json::parse(TraceJson(run));
  EXPECT_EQ(doc["command"][1], "/data/\xEF\xBF\xBD.dat");
  EXPECT_EQ(doc["exit_status"], 3);
}

WhatIfOutcome Replayed(double traced_read_seconds, double cold_read_seconds) {
  WhatIfOutcome f;
  f.path = "/data/f";
  f.size = 1 << 20;
  probes::WhatIfStep step;
  step.access = {false, probes::TracedPattern::kSequential, 256, 1 << 20};
  step.as_traced_seconds = cold_read_seconds;
  step.larger_seconds = cold_read_seconds / 2;
  f.steps.push_back(step);
  f.totals = probes::TotalsOf(f.steps);
  f.traced_read_seconds = traced_read_seconds;
  f.as_traced_read_seconds = cold_read_seconds;
  f.page_cache = ServedFromPageCache(f);
  return f;
}

// The run: 0.027 s traced, 0.158 s replayed cold as traced.
TEST(TraceOutput, ATracedRunServedFromThePageCacheIsSaidToBe) {
  TraceRun run;
  run.what_if = true;
  run.what_if_files = {Replayed(0.027, 0.158), Replayed(0.150, 0.158)};
  EXPECT_TRUE(run.what_if_files[0].page_cache);
  EXPECT_FALSE(run.what_if_files[1].page_cache);
  const std::string text = TraceText(run);
  EXPECT_NE(
      text.find("  the traced run read it in 0.0270 s, the cold replay as traced in 0.1580 s:\n"
                "  the page cache served the program; the ratio compares two cold replays, "
                "not the program's own run\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("  the traced run read it in 0.1500 s, the cold replay as traced in 0.1580 "
                      "s\n"),
            std::string::npos)
      << text;
  const auto doc = nlohmann::json::parse(TraceJson(run));
  const auto& traced = doc["what_if"]["files"][0]["traced"];
  EXPECT_EQ(traced["read_seconds"], 0.027);
  EXPECT_EQ(traced["as_traced_read_seconds"], 0.158);
  EXPECT_EQ(traced["page_cache"], true);
}

TEST(TraceOutput, UntimedCallsSayNothingOfThePageCache) {
  const WhatIfOutcome f = Replayed(0, 0.158);  // --no-times
  EXPECT_FALSE(ServedFromPageCache(f));
  TraceRun run;
  run.what_if = true;
  run.what_if_files = {f};
  EXPECT_EQ(TraceText(run).find("the traced run"), std::string::npos);
}

// The directory's name swapped for a symlink to another directory once it
// was made: what is created in it stays in it, and is removed with it.
TEST(ScratchDirectory, ASymlinkSwappedInLeadsNothingElsewhere) {
  testing::TempDir dir;
  const std::filesystem::path elsewhere = dir.path() / "elsewhere";
  std::filesystem::create_directory(elsewhere);
  std::filesystem::path moved;
  {
    auto scratch = ScratchDirectory::Make(dir.path().string());
    ASSERT_TRUE(scratch.has_value()) << scratch.error().ToString();
    const std::filesystem::path named = dir.path() / scratch->name();
    moved = dir.path() / "moved";
    std::filesystem::rename(named, moved);
    std::filesystem::create_directory_symlink(elsewhere, named);
    std::ofstream(scratch->path() + "/probe-file") << "data";
    EXPECT_TRUE(std::filesystem::is_empty(elsewhere));
    EXPECT_TRUE(std::filesystem::exists(moved / "probe-file"));
  }
  EXPECT_TRUE(std::filesystem::is_empty(elsewhere));
  EXPECT_TRUE(std::filesystem::is_empty(moved));  // emptied through its descriptor
}

TEST(ScratchDirectory, IsRemovedWithWhatItHolds) {
  testing::TempDir dir;
  {
    auto scratch = ScratchDirectory::Make(dir.path().string());
    ASSERT_TRUE(scratch.has_value()) << scratch.error().ToString();
    EXPECT_TRUE(scratch->name().starts_with(".iowatch-what-if."));
    std::ofstream(scratch->path() + "/a") << "a";
    std::ofstream(scratch->path() + "/b") << "b";
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(ScratchDirectory, AMissingParentIsNamed) {
  const auto scratch = ScratchDirectory::Make("/nonexistent/dir");
  ASSERT_FALSE(scratch.has_value());
  EXPECT_EQ(scratch.error().path, "/nonexistent/dir");
}

}  // namespace
}  // namespace iowatch::daemon
