#include <gtest/gtest.h>

#include "cli/shared/push_options.h"
#include "daemon/metrics/probe_metrics_renderer.h"
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

// What is pushed is what /metrics renders, as it is: one renderer per series.
TEST(ProbeRunMetrics, TheFamiliesOfARun) {
  std::string text;
  RenderProbeRunMetrics(OneJob(), 1700000100, text);
  for (const char* line :
       {"iowatch_probe_iops{probe=\"db\\\"disk\",op=\"read\"} 1234.5",
        "iowatch_probe_clat_seconds_bucket{probe=\"db\\\"disk\",op=\"read\",le=\"1e-05\"} 2",
        "iowatch_probe_clat_seconds_bucket{probe=\"db\\\"disk\",op=\"read\",le=\"+Inf\"} 9",
        "iowatch_probe_clat_seconds_sum{probe=\"db\\\"disk\",op=\"read\"} 0.125",
        "iowatch_probe_clat_seconds_count{probe=\"db\\\"disk\",op=\"read\"} 9",
        "# TYPE iowatch_probe_clat_seconds histogram",
        "iowatch_probe_run_duration_seconds{probe=\"db\\\"disk\"} 3"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  EXPECT_EQ(text.find("iowatch_probe_store_up"), std::string::npos);  // the daemon's, not a run's
  EXPECT_EQ(text.find("iowatch_probe_interval_seconds"), std::string::npos);
}

TEST(SweepMetrics, CompletedPointsOnlyWithTheirLabels) {
  probes::SweepReport report;
  report.device = "vda";
  report.started_unix_ms = 1'700'000'000'000;
  probes::SweepSample done;
  done.point = {probes::SweepMode::kDirect, false, true, 4096, 8};
  done.measure.iops = 5000;
  done.measure.clat_p99_ns = 250'000;
  done.measure.lat_p99_ns = 340'000;
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
  EXPECT_NE(text.find("iowatch_sweep_lat_seconds{" + labels + ",stat=\"p99\"} 0.00034\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("iowatch_sweep_timestamp_seconds{device=\"vda\"} 1700000000\n"),
            std::string::npos);
  EXPECT_EQ(text.find("rw=\"write\""), std::string::npos);  // skipped: no series
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
  for (const char* bad : {"http://gw?x", "http://gw#x", "http://g w"}) {
    EXPECT_FALSE(MakePushTarget(bad, "j", {}).has_value()) << bad;
  }
  EXPECT_FALSE(MakePushTarget("http://gw", "", {}).has_value());
  EXPECT_FALSE(MakePushTarget("http://gw", "j\xff", {}).has_value());
  for (const char* bad : {"job=x", "1a=x", "a", "a=", "a=\xff", "a=x\xc3"}) {
    EXPECT_FALSE(MakePushTarget("http://gw", "j", {bad}).has_value()) << bad;
  }
  const auto utf8 = MakePushTarget("http://gw", "j", {"a=\xc3\xa9"});
  ASSERT_TRUE(utf8.has_value());
  EXPECT_EQ(MakePushTarget("http://gw", "j", {"a=\xff"}).error().message,
            "--push-label: expected NAME=VALUE (a label name other than job, a value in UTF-8, "
            "not empty), found \"a=\\xff\"");
}

// Values went into the path raw: `x#` cut the URL (the
// rest became a fragment: instance dropped), `?` started a query, `..` ate
// the segment before it, a space made the URL invalid. Percent-encoded now,
// base64 (the gateway's NAME@base64 form) for a '/' and the dot segments.
TEST(PushTarget, GroupingPathEncodesEveryValue) {
  auto t = MakePushTarget("http://gw:9091/", "iowatch probe",
                          {"a=x#", "b=?q", "c=..", "d=a/b", "e=a b", "f=.", "g=%41", "instance=h"});
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  EXPECT_EQ(GroupingPath(*t),
            "/metrics/job/iowatch%20probe/a/x%23/b/%3Fq/c@base64/Li4=/d@base64/YS9i/e/a%20b"
            "/f@base64/Lg==/g/%2541/instance/h");
  t = MakePushTarget("http://gw", "a/b", {"x=\xc3\xa9~-_.", "y=?/?", "z=/?>", "instance=i"});
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(GroupingPath(*t),
            "/metrics/job@base64/YS9i/x/%C3%A9~-_./y@base64/Py8_/z@base64/Lz8-/instance/i");
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
