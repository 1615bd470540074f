// The metric table and ExtractMetrics on hand-built ProbeResults whose every
// figure is known exactly: rates from exact runtime (not fio's whole
// milliseconds), latencies in seconds, only directions that did I/O, slat
// only when recorded.
#include "probes/verdicts/run_metrics.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace iowatch::probes {
namespace {

using std::chrono::nanoseconds;

// ios I/Os of 4 KiB; clat 1..100 ns, one each (below 128 ns the histogram is
// exact, so p50 = 50, p90 = 90, p99 = 99, p99.9 = 100 and the mean is 50.5);
// lat = clat + 10 ns; slat 5 ns when `async`.
DirectionStats MakeDirection(uint64_t ios, nanoseconds runtime, bool async) {
  DirectionStats d;
  d.ios = ios;
  d.bytes = ios * 4096;
  d.runtime = runtime;
  for (uint64_t ns = 1; ns <= 100; ++ns) {
    d.clat.Add(ns);
    d.clat_histogram.Record(ns);
    d.lat.Add(ns + 10);
    d.lat_histogram.Record(ns + 10);
    if (async) d.slat.Add(5);
  }
  return d;
}

double Value(const std::vector<MetricSample>& samples, std::string_view op,
             std::string_view metric) {
  for (const MetricSample& s : samples) {
    if (s.op == op && s.metric == metric) return s.value;
  }
  ADD_FAILURE() << "no " << op << " " << metric;
  return -1;
}

std::vector<std::string> Names(const std::vector<MetricSample>& samples, std::string_view op) {
  std::vector<std::string> out;
  for (const MetricSample& s : samples) {
    if (s.op == op) out.push_back(s.metric);
  }
  return out;
}

TEST(BaselineMetricsTest, FixedOrderAndDirections) {
  std::vector<std::string> names;
  for (const MetricSpec& spec : BaselineMetrics()) names.emplace_back(spec.name);
  // The first nine in the order stores before the load bands (schema v4) kept them.
  EXPECT_EQ(names, (std::vector<std::string>{
                       "iops", "bandwidth_bytes", "clat_mean_seconds", "clat_p50_seconds",
                       "clat_p90_seconds", "clat_p99_seconds", "clat_p99_9_seconds",
                       "lat_mean_seconds", "slat_mean_seconds", "lat_p50_seconds",
                       "lat_p90_seconds", "lat_p99_seconds", "lat_p99_9_seconds"}));
  for (const MetricSpec& spec : BaselineMetrics()) {
    const bool throughput = spec.name == "iops" || spec.name == "bandwidth_bytes";
    EXPECT_EQ(spec.worse, throughput ? Worse::kLower : Worse::kHigher) << spec.name;
    const bool tail = spec.name.ends_with("_p99_seconds") || spec.name.ends_with("_p99_9_seconds");
    EXPECT_EQ(spec.is_latency_tail, tail) << spec.name;
    // Judged by default: throughput and total latency, never clat or slat.
    EXPECT_EQ(spec.judged_by_default, throughput || spec.name.starts_with("lat_")) << spec.name;
    const bool percentile = spec.name.find("_p") != std::string_view::npos;
    EXPECT_EQ(spec.quantile > 0, percentile) << spec.name;
    EXPECT_EQ(spec.source != LatencySource::kNone, percentile) << spec.name;
  }
  EXPECT_DOUBLE_EQ(FindMetric("lat_p99_9_seconds")->quantile, 0.999);
  EXPECT_EQ(FindMetric("lat_p99_9_seconds")->source, LatencySource::kLat);
  EXPECT_EQ(FindMetric("clat_p50_seconds")->source, LatencySource::kClat);
}

TEST(BaselineMetricsTest, FindMetric) {
  const MetricSpec* p99 = FindMetric("clat_p99_seconds");
  ASSERT_NE(p99, nullptr);
  EXPECT_EQ(p99->name, "clat_p99_seconds");
  EXPECT_TRUE(p99->is_latency_tail);
  EXPECT_EQ(FindMetric("iops")->worse, Worse::kLower);
  EXPECT_EQ(FindMetric("clat_p95_seconds"), nullptr);
  EXPECT_EQ(FindMetric(""), nullptr);
}

TEST(ExtractMetricsTest, ReadOnlySyncRunHasExactValues) {
  ProbeResult r;
  // 1.2345678 s: fio would divide by 1234 ms and report 810.37 IOPS.
  r.read = MakeDirection(1000, nanoseconds(1'234'567'800), /*async=*/false);
  const auto m = ExtractMetrics(r);

  EXPECT_EQ(Names(m, "read"),
            (std::vector<std::string>{"iops", "bandwidth_bytes", "clat_mean_seconds",
                                      "clat_p50_seconds", "clat_p90_seconds", "clat_p99_seconds",
                                      "clat_p99_9_seconds", "lat_mean_seconds", "lat_p50_seconds",
                                      "lat_p90_seconds", "lat_p99_seconds", "lat_p99_9_seconds"}));
  EXPECT_TRUE(Names(m, "write").empty());
  EXPECT_DOUBLE_EQ(Value(m, "read", "iops"), 1000 / 1.2345678);
  EXPECT_DOUBLE_EQ(Value(m, "read", "bandwidth_bytes"), 4096000 / 1.2345678);
  EXPECT_NE(Value(m, "read", "iops"), r.read.Iops());
  EXPECT_DOUBLE_EQ(Value(m, "read", "clat_mean_seconds"), 50.5e-9);
  EXPECT_DOUBLE_EQ(Value(m, "read", "clat_p50_seconds"), 50e-9);
  EXPECT_DOUBLE_EQ(Value(m, "read", "clat_p90_seconds"), 90e-9);
  EXPECT_DOUBLE_EQ(Value(m, "read", "clat_p99_seconds"), 99e-9);
  EXPECT_DOUBLE_EQ(Value(m, "read", "clat_p99_9_seconds"), 100e-9);
  EXPECT_DOUBLE_EQ(Value(m, "read", "lat_mean_seconds"), 60.5e-9);
  // lat is 11..110 ns, exact in the histogram.
  EXPECT_DOUBLE_EQ(Value(m, "read", "lat_p50_seconds"), 60e-9);
  EXPECT_DOUBLE_EQ(Value(m, "read", "lat_p90_seconds"), 100e-9);
  EXPECT_DOUBLE_EQ(Value(m, "read", "lat_p99_seconds"), 109e-9);
  EXPECT_DOUBLE_EQ(Value(m, "read", "lat_p99_9_seconds"), 110e-9);
}

TEST(ExtractMetricsTest, PercentilesComeFromTheHistogram) {
  ProbeResult r;
  r.read.ios = 3;
  r.read.runtime = nanoseconds(1'000'000'000);
  for (uint64_t ns : {1'000'000u, 2'000'000u, 50'000'000u}) {
    r.read.clat.Add(ns);
    r.read.clat_histogram.Record(ns);
    r.read.lat.Add(ns);
  }
  const auto m = ExtractMetrics(r);
  EXPECT_DOUBLE_EQ(Value(m, "read", "clat_p50_seconds"),
                   static_cast<double>(r.read.clat_histogram.Percentile(50)) * 1e-9);
  EXPECT_DOUBLE_EQ(Value(m, "read", "clat_p99_9_seconds"),
                   static_cast<double>(r.read.clat_histogram.Percentile(99.9)) * 1e-9);
  EXPECT_NEAR(Value(m, "read", "clat_p99_seconds"), 0.05, 0.05 / 128);
}

TEST(ExtractMetricsTest, MixedAsyncRunListsReadThenWriteWithSlat) {
  ProbeResult r;
  r.read = MakeDirection(300, nanoseconds(2'000'000'000), /*async=*/true);
  r.write = MakeDirection(100, nanoseconds(2'000'000'000), /*async=*/true);
  const auto m = ExtractMetrics(r);

  ASSERT_EQ(m.size(), 26u);
  EXPECT_EQ(m.front().op, "read");
  EXPECT_EQ(m.back().op, "write");
  EXPECT_EQ(m.back().metric, "lat_p99_9_seconds");
  EXPECT_DOUBLE_EQ(Value(m, "read", "iops"), 150);
  EXPECT_DOUBLE_EQ(Value(m, "write", "iops"), 50);
  EXPECT_DOUBLE_EQ(Value(m, "write", "bandwidth_bytes"), 50 * 4096);
  EXPECT_DOUBLE_EQ(Value(m, "read", "slat_mean_seconds"), 5e-9);
  EXPECT_DOUBLE_EQ(Value(m, "write", "slat_mean_seconds"), 5e-9);
}

TEST(ExtractMetricsTest, DirectionWithoutIoIsAbsent) {
  ProbeResult r;
  r.write = MakeDirection(10, nanoseconds(1'000'000'000), /*async=*/false);
  r.read.errors = 3;  // failed I/Os are not a measurement
  r.read.runtime = nanoseconds(1'000'000'000);
  const auto m = ExtractMetrics(r);
  EXPECT_TRUE(Names(m, "read").empty());
  EXPECT_EQ(Names(m, "write").size(), 12u);
  EXPECT_TRUE(ExtractMetrics(ProbeResult{}).empty());
}

TEST(ExtractMetricsTest, NoRatesWithoutRuntime) {
  ProbeResult r;
  r.read = MakeDirection(10, nanoseconds(0), /*async=*/false);
  const auto names = Names(ExtractMetrics(r), "read");
  EXPECT_EQ(names.front(), "clat_mean_seconds");
  EXPECT_EQ(names.size(), 10u);
}

}  // namespace
}  // namespace iowatch::probes
