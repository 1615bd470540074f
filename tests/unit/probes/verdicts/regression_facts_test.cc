// RegressionFacts: the summary of a baseline's runs and the one line that
// explains a regression, as the journal, the status page and `baseline show`
// print it.
#include "probes/verdicts/regression_facts.h"

#include <gtest/gtest.h>

#include <vector>

namespace iowatch::probes {
namespace {

// A run of `seconds` with `foreign` 4 KiB requests/s of others and `steal`.
LearningCandidate Candidate(int64_t id, int64_t start_ms, double foreign, double steal) {
  RunConditions c;
  c.seconds = 1;
  c.device_ios = c.own_requests = 100;
  c.device_bytes = c.own_bytes = 100 * 4096;
  c.device_ios += static_cast<uint64_t>(foreign);
  c.device_bytes += static_cast<uint64_t>(foreign) * 4096;
  c.cpu_steal = steal;
  return {id, start_ms, c};
}

TEST(RegressionFacts, SummarizesOnlyTheBaselinesRuns) {
  const std::vector<LearningCandidate> candidates = {
      Candidate(1, 1'000'000, 0, 0.01),
      Candidate(2, 2'000'000, 100, 0.03),
      Candidate(3, 3'000'000, 5000, 0.40),  // not the baseline's
      Candidate(4, 4'000'000, 20, 0.02),
      {5, 5'000'000, std::nullopt}};
  const std::vector<int64_t> ids = {4, 2, 1, 5, 99};  // 99: pruned
  const std::optional<RunsSummary> s = SummarizeRuns(ids, candidates);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->runs, 4u);
  EXPECT_EQ(s->first_start_ms, 1'000'000);
  EXPECT_EQ(s->last_start_ms, 5'000'000);
  EXPECT_EQ(s->with_conditions, 3u);
  // Foreign loads 0, 100 and 20 requests/s of 4 KiB, weighted 1 + 4/64 each.
  ASSERT_TRUE(s->foreign_load.has_value());
  EXPECT_NEAR(*s->foreign_load, 20 * (1 + 4096.0 / 65536), 1e-9);
  EXPECT_NEAR(*s->cpu_steal, 0.02, 1e-12);
  EXPECT_FALSE(SummarizeRuns(std::vector<int64_t>{99}, candidates).has_value());
  const std::optional<RunsSummary> unknown = SummarizeRuns(std::vector<int64_t>{5}, candidates);
  ASSERT_TRUE(unknown.has_value());
  EXPECT_FALSE(unknown->foreign_load.has_value());
}

TEST(RegressionFacts, OneLineSaysWhatHowMuchSinceWhenAndAgainstWhat) {
  RegressionFacts f;
  f.op = "read";
  f.metric = "iops";
  f.ratio = 0.5;
  f.drift_ratio = 0.934;
  f.since_ms = 1'796'379'300'000;  // 2026-12-04T10:15:00Z
  f.baseline = RunsSummary{10, 1'796'112'000'000, 1'796'119'200'000, 10, 12.4, 0.01};
  f.reference = RunsSummary{96, 1'796'025'600'000, 1'796'108'400'000, 96, 3.0, 0.005};
  f.run = RunLoad{850, 0.03};
  EXPECT_EQ(ExplainRegression(f),
            "0.50x its baseline, 0.93x its first day; bad since 2026-12-04T10:15:00Z; "
            "judged against 10 runs of 2026-12-01T08:00:00Z to 2026-12-01T10:00:00Z (load 12/s, "
            "steal 1.0 %), first day 96 runs of 2026-11-30T08:00:00Z to "
            "2026-12-01T07:00:00Z (load 3/s, steal 0.5 %); the judged run: load 850/s, "
            "steal 3.0 %");
  // What is not known is left out, and a missing start says so.
  RegressionFacts bare;
  bare.op = "write";
  bare.metric = "lat_mean_seconds";
  bare.ratio = 3;
  EXPECT_EQ(ExplainRegression(bare), "3.00x its baseline; bad since an unknown time");
  EXPECT_EQ(ExplainRegression(f, [](int64_t ms) { return std::to_string(ms / 1000); }),
            "0.50x its baseline, 0.93x its first day; bad since 1796379300; "
            "judged against 10 runs of 1796112000 to 1796119200 (load 12/s, steal 1.0 %), "
            "first day 96 runs of 1796025600 to 1796108400 (load 3/s, steal 0.5 %); the "
            "judged run: load 850/s, steal 3.0 %");
}

}  // namespace
}  // namespace iowatch::probes
