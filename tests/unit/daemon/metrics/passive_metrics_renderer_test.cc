#include "daemon/metrics/passive_metrics_renderer.h"

#include <gtest/gtest.h>

#include <string>

namespace iowatch::daemon {
namespace {

PassiveSeriesRow Row(std::string device, std::string op) {
  PassiveSeriesRow r;
  r.device = std::move(device);
  r.op = std::move(op);
  r.size = "all";
  r.source = probes::PassiveSource::kDiskstats;
  r.last.window.requests = 6000;
  r.last.window.mean_seconds = 0.0004;
  return r;
}

bool HasLine(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos;
}

// A regressed series and one still learning: each family says what it knows
// of each, and nothing it does not (no prediction before a judged window).
TEST(PassiveMetrics, EachSeriesSaysWhatItsJudgeKnows) {
  PassiveSnapshot snapshot;
  PassiveSeriesRow slow = Row("sda", "read");
  probes::PassiveVerdict judged;
  judged.predicted_seconds = 0.0002;
  judged.ratio = 2;
  judged.bound_ratio = 1.25;
  judged.bad = true;
  slow.judged = judged;
  slow.regressed = true;
  slow.regressed_since_ms = 1'700'000'000'500;
  slow.model_windows = 120;
  slow.drift_ratio = 1.125;
  slow.windows[0] = 7;   // judged
  slow.windows[4] = 60;  // learning
  slow.production_requests = 402'000;
  slow.production_seconds = 96.5;
  slow.judged_seconds = 80.25;
  slow.predicted_seconds = 40.125;
  snapshot.series.push_back(slow);
  PassiveSeriesRow learning = Row("sdb", "write");
  learning.last.window.requests = 0;
  learning.windows[1] = 3;  // too few requests
  snapshot.series.push_back(learning);
  std::string out;
  RenderPassiveMetrics(snapshot, out);
  const std::string sda = R"({device="sda",op="read",size="all",source="diskstats"})";
  const std::string sdb = R"({device="sdb",op="write",size="all",source="diskstats"})";
  EXPECT_TRUE(HasLine(out, "iowatch_passive_latency_ratio" + sda + " 2")) << out;
  EXPECT_TRUE(HasLine(out, "iowatch_passive_bound_ratio" + sda + " 1.25"));
  EXPECT_TRUE(HasLine(out, "iowatch_passive_predicted_latency_seconds" + sda + " 0.0002"));
  EXPECT_TRUE(HasLine(out, "iowatch_passive_observed_latency_seconds" + sda + " 0.0004"));
  EXPECT_TRUE(HasLine(out, "iowatch_passive_regression" + sda + " 1"));
  EXPECT_TRUE(
      HasLine(out, "iowatch_passive_regression_since_timestamp_seconds" + sda + " 1700000000.5"));
  EXPECT_TRUE(HasLine(out, "iowatch_passive_model_windows" + sda + " 120"));
  EXPECT_TRUE(HasLine(out, "iowatch_passive_drift_ratio" + sda + " 1.125"));
  EXPECT_EQ(out.find("iowatch_passive_drift_ratio" + sdb), std::string::npos);
  EXPECT_TRUE(HasLine(out, "iowatch_passive_window_requests" + sda + " 6000"));
  EXPECT_TRUE(HasLine(out, "iowatch_passive_requests_total" + sda + " 402000"));
  EXPECT_TRUE(HasLine(out, "iowatch_passive_latency_seconds_total" + sda + " 96.5"));
  EXPECT_TRUE(HasLine(out, "iowatch_passive_requests_total" + sdb + " 0"));
  EXPECT_TRUE(HasLine(out, "iowatch_passive_judged_latency_seconds_total" + sda + " 80.25"));
  EXPECT_TRUE(HasLine(out, "iowatch_passive_predicted_latency_seconds_total" + sda + " 40.125"));
  EXPECT_TRUE(HasLine(
      out,
      R"(iowatch_passive_windows_total{device="sda",op="read",size="all",source="diskstats",result="learning"} 60)"));
  EXPECT_TRUE(HasLine(out, "iowatch_passive_regression" + sdb + " 0"));
  EXPECT_TRUE(HasLine(
      out,
      R"(iowatch_passive_windows_total{device="sdb",op="write",size="all",source="diskstats",result="too_few_requests"} 3)"));
  EXPECT_EQ(out.find("iowatch_passive_latency_ratio" + sdb), std::string::npos);
  EXPECT_EQ(out.find("iowatch_passive_observed_latency_seconds" + sdb), std::string::npos);
  EXPECT_EQ(out.find("iowatch_passive_regression_since_timestamp_seconds" + sdb),
            std::string::npos);
  // Every family it names is rendered once, with its header.
  for (const std::string_view family : PassiveMetricFamilyNames()) {
    EXPECT_NE(out.find("# TYPE " + std::string(family) + " "), std::string::npos) << family;
  }
}

// Without series, only whether the judge's state is stored.
TEST(PassiveMetrics, NoSeriesOnlyTheStoresFamilies) {
  std::string out;
  PassiveSnapshot snapshot;
  snapshot.store_up = true;
  snapshot.store_errors = 2;
  RenderPassiveMetrics(snapshot, out);
  EXPECT_EQ(out,
            "# HELP iowatch_passive_store_up 1 while the passive judge's states and windows are "
            "stored (a restart keeps its verdicts and models), 0 when it judges in memory.\n"
            "# TYPE iowatch_passive_store_up gauge\n"
            "iowatch_passive_store_up 1\n"
            "# HELP iowatch_passive_store_errors_total Batches of the passive judge's windows and "
            "states that could not be stored.\n"
            "# TYPE iowatch_passive_store_errors_total counter\n"
            "iowatch_passive_store_errors_total 2\n");
}

}  // namespace
}  // namespace iowatch::daemon
