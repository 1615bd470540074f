// iowatch's own families: configuration loads, samples, the build and the
// process, as they appear in /metrics.
#include "daemon/metrics/self_metrics.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "daemon/scheduling/probe_counters.h"
#include "daemon/scheduling/probe_run.h"

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

}  // namespace
}  // namespace iowatch::daemon
