#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include "daemon/cli/push_options.h"
#include "daemon/metrics/probe_metrics_renderer.h"
#include "daemon/metrics/push/exposition_families.h"
#include "daemon/metrics/push/pushgateway.h"
#include "daemon/metrics/sweep_metrics_renderer.h"

namespace iowatch::daemon {
namespace {

ProbeSnapshot OneJob() {
  ProbeSnapshot s;
  ProbeJobSnapshot job;
  job.name = "db\"disk";
  job.last_metrics = {{"read", "iops", 1234.5}, {"read", "clat_p99_seconds", 0.00025}};
  job.last_run_timestamp_seconds = 1700000000.5;
  job.run_duration_seconds = 3;
  ProbeClatHistogram h;
  h.op = "read";
  h.cumulative.assign(ProbeClatBucketBoundsNs().size(), 7);
  h.cumulative[0] = 2;
  h.count = 9;
  h.sum_seconds = 0.125;
  job.clat = {h};
  s.jobs = {job};
  return s;
}

// What the renderer writes, read back and written again by prometheus-cpp's
// own serializer, is the same exposition: nothing lost on the way to a push.
TEST(ParseExposition, TheProbeRunFamiliesSurviveTheRoundTrip) {
  std::string text;
  RenderProbeRunMetrics(OneJob(), 1700000100, text);
  auto families = ParseExposition(text);
  ASSERT_TRUE(families.has_value()) << families.error().ToString();
  const std::string again = prometheus::TextSerializer().Serialize(*families);
  for (const char* line :
       {"iowatch_probe_iops{probe=\"db\\\"disk\",op=\"read\"} 1234.5",
        "iowatch_probe_clat_seconds_bucket{probe=\"db\\\"disk\",op=\"read\",le=\"1e-05\"} 2",
        "iowatch_probe_clat_seconds_bucket{probe=\"db\\\"disk\",op=\"read\",le=\"+Inf\"} 9",
        "iowatch_probe_clat_seconds_sum{probe=\"db\\\"disk\",op=\"read\"} 0.125",
        "iowatch_probe_clat_seconds_count{probe=\"db\\\"disk\",op=\"read\"} 9",
        "# TYPE iowatch_probe_clat_seconds histogram",
        "iowatch_probe_run_duration_seconds{probe=\"db\\\"disk\"} 3"}) {
    EXPECT_NE(again.find(line), std::string::npos) << line << "\n" << again;
  }
  EXPECT_EQ(text.find("iowatch_probe_store_up"), std::string::npos);  // the daemon's, not a run's
  EXPECT_EQ(text.find("iowatch_probe_interval_seconds"), std::string::npos);
}

TEST(ParseExposition, ErrorsNameTheLine) {
  EXPECT_EQ(ParseExposition("x 1\n").error().ToString(),
            "exposition:1: expected a # TYPE line before x");
  EXPECT_EQ(ParseExposition("# TYPE x gauge\nx{a=\"b} 1\n").error().ToString(),
            "exposition:2: expected NAME{LABELS} VALUE");
  EXPECT_EQ(ParseExposition("# TYPE x gauge\nx 1e\n").error().line, 2);
  EXPECT_EQ(ParseExposition("# TYPE x summary\n").error().ToString(),
            "exposition:1: expected # TYPE NAME gauge|counter|histogram|untyped");
  EXPECT_EQ(ParseExposition("# TYPE h histogram\nh_bucket 1\n").error().ToString(),
            "exposition:2: expected an le label");
  auto special = ParseExposition("# TYPE g gauge\ng{a=\"x\\ny\"} +Inf\n");
  ASSERT_TRUE(special.has_value());
  EXPECT_EQ((*special)[0].metric[0].label[0].value, "x\ny");
  EXPECT_TRUE(std::isinf((*special)[0].metric[0].gauge.value));
}

TEST(SweepMetrics, CompletedPointsOnlyWithTheirLabels) {
  probes::SweepReport report;
  report.device = "vda";
  report.started_unix_ms = 1'700'000'000'000;
  probes::SweepSample done;
  done.point = {probes::SweepMode::kDirect, false, true, 4096, 8};
  done.measure.iops = 5000;
  done.measure.clat_p99_ns = 250'000;
  done.measure.cpu_percent = 12.5;
  probes::SweepSample skipped = done;
  skipped.point.write = true;
  skipped.measure.end = "skipped";
  report.samples = {done, skipped};
  std::string text;
  RenderSweepMetrics(report, text);
  const std::string labels =
      "bs=\"4096\",device=\"vda\",iodepth=\"8\",mode=\"direct\",pattern=\"random\",rw=\"read\"";
  EXPECT_NE(text.find("iowatch_sweep_iops{" + labels + "} 5000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("iowatch_sweep_clat_seconds{" + labels + ",stat=\"p99\"} 0.00025\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("iowatch_sweep_cpu_ratio{" + labels + "} 0.125\n"), std::string::npos);
  EXPECT_NE(text.find("iowatch_sweep_timestamp_seconds{device=\"vda\"} 1700000000\n"),
            std::string::npos);
  EXPECT_EQ(text.find("rw=\"write\""), std::string::npos);  // skipped: no series
  auto families = ParseExposition(text);
  ASSERT_TRUE(families.has_value()) << families.error().ToString();
  EXPECT_EQ(families->size(), 6u);  // clat's two stats in one family
}

TEST(PushTarget, UrlJobAndLabels) {
  auto t = MakePushTarget("http://gw:9091", "iowatch_probe", {"site=lab", "instance=db1"});
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  EXPECT_EQ(t->labels.size(), 2u);  // instance given: not added
  t = MakePushTarget("https://gw/prefix/", "j", {});
  ASSERT_TRUE(t.has_value());
  ASSERT_EQ(t->labels.size(), 1u);
  EXPECT_EQ(t->labels[0].first, "instance");
  for (const char* bad : {"gw:9091", "ftp://gw", "http://", "http://gw:x"}) {
    EXPECT_FALSE(MakePushTarget(bad, "j", {}).has_value()) << bad;
  }
  EXPECT_FALSE(MakePushTarget("http://gw", "a/b", {}).has_value());
  for (const char* bad : {"job=x", "1a=x", "a", "a=", "a=b/c"}) {
    EXPECT_FALSE(MakePushTarget("http://gw", "j", {bad}).has_value()) << bad;
  }
}

TEST(PushOptions, TakenCheckedAndRefusedAlone) {
  PushOptions o;
  EXPECT_TRUE(*TakePushOption("push-label", "a=b", o));
  EXPECT_FALSE(*TakePushOption("bs", "4k", o));
  EXPECT_EQ(CheckPushOptions(o).error().message,
            "--push-job and --push-label need --push-gateway=URL");
  EXPECT_TRUE(*TakePushOption("push-gateway", "http://gw:9091", o));
  EXPECT_TRUE(CheckPushOptions(o).has_value());
  EXPECT_FALSE(TakePushOption("push-timeout", "0", o).has_value());
  EXPECT_TRUE(*TakePushOption("push-timeout", "5", o));
  EXPECT_EQ(o.timeout, std::chrono::seconds(5));
}

}  // namespace
}  // namespace iowatch::daemon
