// iowatch's own families: configuration loads, samples, the build and the
// process, as they appear in /metrics.
#include "daemon/metrics/self_metrics.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "daemon/metrics/process_stats.h"
#include "daemon/scheduling/probe_counters.h"
#include "daemon/scheduling/probe_run.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

TEST(SelfMetrics, ConfigLoadsAndSamplesAreCountedWhereTheyHappen) {
  SelfMetrics self;
  self.ConfigLoaded(true, 1700000000);
  self.ConfigLoaded(false, 1700000100);
  self.SampleTaken(0.003, 0.25);
  self.SampleTaken(0.0004, 0.01);
  std::string text;
  self.Render(1.5, text);
  EXPECT_TRUE(Has(text, "iowatch_config_reloads_total{result=\"success\"} 1")) << text;
  EXPECT_TRUE(Has(text, "iowatch_config_reloads_total{result=\"failure\"} 1"));
  EXPECT_TRUE(Has(text, "iowatch_config_last_reload_successful 0"));
  EXPECT_TRUE(Has(text, "iowatch_config_last_reload_success_timestamp_seconds 1700000000"));
  EXPECT_TRUE(Has(text, "iowatch_sample_duration_seconds_bucket{le=\"0.0005\"} 1"));
  EXPECT_TRUE(Has(text, "iowatch_sample_duration_seconds_bucket{le=\"0.0025\"} 1"));
  EXPECT_TRUE(Has(text, "iowatch_sample_duration_seconds_bucket{le=\"0.005\"} 2"));
  EXPECT_TRUE(Has(text, "iowatch_sample_duration_seconds_bucket{le=\"+Inf\"} 2"));
  EXPECT_TRUE(Has(text, "iowatch_sample_duration_seconds_count 2"));
  // The sum as the double it is, in the shortest form that reads back as it.
  EXPECT_TRUE(Has(text, fmt::format("iowatch_sample_duration_seconds_sum {}", 0.003 + 0.0004)));
  EXPECT_TRUE(Has(text, "iowatch_sample_lag_seconds 0.01"));
  EXPECT_TRUE(Has(text, "iowatch_sample_age_seconds 1.5"));
  EXPECT_TRUE(Has(text, "# TYPE iowatch_sample_duration_seconds histogram"));
  EXPECT_NE(text.find("iowatch_build_info{compiler=\""), std::string::npos);
  EXPECT_NE(text.find("\nprocess_resident_memory_bytes "), std::string::npos);
}

TEST(SelfMetrics, ProbeRunsSkipsAndStoreErrorsComeFromTheSameRegistry) {
  SelfMetrics self;
  ProbeCounters counters(&self.registry());
  counters.AddJob("rr");
  for (int i = 0; i < 7; ++i) counters.CountRun("rr", RunResult::kOk);
  counters.CountRun("rr", RunResult::kError);
  counters.CountRun("rr", RunResult::kContended);
  counters.CountRun("rr", RunResult::kSkipped);
  counters.CountRun("rr", RunResult::kSkipped);
  counters.CountStoreError();
  counters.CountStoreError();
  std::string text;
  self.Render(0, text);
  EXPECT_NE(text.find("# TYPE iowatch_probe_runs_total counter\n"
                      "iowatch_probe_runs_total{probe=\"rr\",result=\"cancelled\"} 0\n"
                      "iowatch_probe_runs_total{probe=\"rr\",result=\"contended\"} 1\n"
                      "iowatch_probe_runs_total{probe=\"rr\",result=\"error\"} 1\n"
                      "iowatch_probe_runs_total{probe=\"rr\",result=\"ok\"} 7\n"
                      "iowatch_probe_runs_total{probe=\"rr\",result=\"skipped\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_TRUE(Has(text, "iowatch_probe_skips_total{probe=\"rr\",reason=\"busy\"} 0"));
  EXPECT_TRUE(Has(text, "iowatch_probe_store_errors_total 2"));
  EXPECT_EQ(counters.Runs("rr"), (RunCounts{7, 1, 2, 0, 1}));
  EXPECT_TRUE(counters.Skips("rr").empty());
  counters.CountSkip("rr", "busy");
  EXPECT_EQ(counters.Skips("rr").at("busy"), 1u);
}

TEST(SelfMetrics, AnUnreadableProcLeavesOutOnlyTheProcessFamilies) {
  SelfMetrics self(FileTree("/nonexistent"));
  std::string text;
  self.Render(0, text);
  EXPECT_EQ(text.find("process_"), std::string::npos);
  EXPECT_NE(text.find("iowatch_build_info"), std::string::npos);
}

// /proc/self/stat's ticks and pages in seconds and bytes with this host's
// USER_HZ and page size (sysconf's), the start from /proc/stat's btime.
TEST(ProcessStats, TicksAndPagesAreConvertedWithThisHostsUnits) {
  const testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "self" / "fd");
  for (const char* fd : {"0", "1", "2"}) std::ofstream(dir.path() / "self" / "fd" / fd) << "";
  // Fields 14, 15 (utime, stime): 200 + 50 ticks; 22 (starttime): 5000 ticks;
  // 23 (vsize): 123456789 bytes; 24 (rss): 300 pages. The name has a space and a ')'.
  std::ofstream(dir.path() / "self" / "stat")
      << "1234 (io) watch) S 1 1234 1234 0 -1 4194560 100 0 0 0 200 50 0 0 20 0 4 0 5000 "
         "123456789 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
  std::ofstream(dir.path() / "stat") << "cpu  1 2 3 4 5 6 7 0 0 0\ncpu0 1 2 3 4 5 6 7 0 0 0\n"
                                        "btime 1700000000\n";
  const auto stats = ReadProcessStats(FileTree(dir.path().string()));
  ASSERT_TRUE(stats) << stats.error().ToString();
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  EXPECT_DOUBLE_EQ(stats->cpu_seconds, 250 / hz);
  EXPECT_EQ(stats->resident_bytes, 300u * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(stats->virtual_bytes, 123456789u);
  const auto start = ReadProcessStartTime(FileTree(dir.path().string()));
  ASSERT_TRUE(start) << start.error().ToString();
  EXPECT_DOUBLE_EQ(*start, 1700000000 + 5000 / hz);
  EXPECT_EQ(stats->open_fds, 3u);
}

}  // namespace
}  // namespace iowatch::daemon
