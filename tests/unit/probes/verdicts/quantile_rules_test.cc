// The sample-count rule per quantile and the order-statistic confidence
// interval on histograms of known distributions.
#include "probes/verdicts/quantile_rules.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "probes/verdicts/baseline.h"

namespace iowatch::probes {
namespace {

TEST(QuantileRulesTest, AQuantileNeedsKOverOneMinusQSamples) {
  EXPECT_EQ(MinSamplesForQuantile(0.5, 50), 100u);
  EXPECT_EQ(MinSamplesForQuantile(0.9, 50), 500u);
  EXPECT_EQ(MinSamplesForQuantile(0.99, 50), 5000u);
  EXPECT_EQ(MinSamplesForQuantile(0.999, 50), 50000u);
  EXPECT_EQ(MinSamplesForQuantile(0.999, 10), 10000u);
  EXPECT_EQ(MinSamplesForQuantile(0, 50), 0u);    // not a quantile
  EXPECT_EQ(MinSamplesForQuantile(0.99, 0), 0u);  // rule off
}

TEST(QuantileRulesTest, TwoSidedZ) {
  EXPECT_NEAR(TwoSidedZ(0.95), 1.959964, 1e-5);
  EXPECT_NEAR(TwoSidedZ(0.99), 2.575829, 1e-5);
  EXPECT_NEAR(TwoSidedZ(0.6826895), 1.0, 1e-5);
}

// n values 1..n µs, one each: the q quantile is q·n µs, and the interval's
// ranks are q·n ∓ z·√(n·q·(1 − q)).
LatencyHistogram Uniform(uint64_t n) {
  LatencyHistogram h;
  for (uint64_t i = 1; i <= n; ++i) h.Record(i * 1000);
  return h;
}

TEST(QuantileRulesTest, IntervalOfAUniformDistributionHasTheExpectedRanks) {
  const uint64_t n = 100000;
  const LatencyHistogram h = Uniform(n);
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const QuantileInterval i = QuantileConfidenceInterval(h, q, 0.99);
    const double half = TwoSidedZ(0.99) * std::sqrt(n * q * (1 - q));
    // Values are ranks in µs, to the histogram's 1/128 resolution.
    EXPECT_NEAR(i.low_seconds * 1e6, n * q - half, (n * q) / 64 + 1) << q;
    EXPECT_NEAR(i.high_seconds * 1e6, n * q + half, (n * q) / 64 + 1) << q;
    // Both ends can fall in one bucket (1/64 of the value wide) when the
    // interval is narrower than that.
    EXPECT_LE(i.low_seconds, i.high_seconds) << q;
  }
  EXPECT_EQ(QuantileConfidenceInterval(LatencyHistogram{}, 0.99, 0.99), QuantileInterval{});
}

TEST(QuantileRulesTest, FewerSamplesGiveAWiderInterval) {
  // Exponential latencies (mean 100 µs): p99.9 from 20,000 samples rests on
  // 20 of them and its interval is wide; from 2,000,000 it is narrow.
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> exp(1 / 100e3);
  LatencyHistogram small, large;
  for (int i = 0; i < 2'000'000; ++i) {
    const auto ns = static_cast<uint64_t>(exp(rng));
    if (i < 20'000) small.Record(ns);
    large.Record(ns);
  }
  const auto width = [](const QuantileInterval& i) { return i.high_seconds - i.low_seconds; };
  const QuantileInterval s = QuantileConfidenceInterval(small, 0.999, 0.99);
  const QuantileInterval l = QuantileConfidenceInterval(large, 0.999, 0.99);
  EXPECT_GT(width(s), 5 * width(l));
  // The true p99.9 (100 µs × ln 1000 = 691 µs) lies in both, to the
  // histogram's resolution (a bucket is 1/64 of its value wide).
  const double slack = 691e-6 / 64;
  EXPECT_LT(s.low_seconds, 691e-6 + slack);
  EXPECT_GT(s.high_seconds, 691e-6 - slack);
  EXPECT_LT(l.low_seconds, 691e-6 + slack);
  EXPECT_GT(l.high_seconds, 691e-6 - slack);
}

// A run of n exponential latencies (mean `mean_ns`) as one read direction.
DirectionStats ExponentialRun(uint64_t n, double mean_ns, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> exp(1 / mean_ns);
  DirectionStats d;
  d.ios = n;
  for (uint64_t i = 0; i < n; ++i) {
    const auto ns = static_cast<uint64_t>(exp(rng)) + 1;
    d.lat.Add(ns);
    d.lat_histogram.Record(ns);
  }
  return d;
}

TEST(QuantileRulesTest, ATailFromFewSamplesCannotRaiseAnything) {
  // A baseline p99.9 of 691 µs from ten healthy runs of 100,000 I/Os; a
  // run of 20,000 I/Os of the same disk: its p99.9 is not judged at all, and
  // its p99 (enough samples) is within the intervals even when it lands
  // above the threshold.
  BaselinePolicy policy;
  policy.spread_factor = 0;
  policy.tail_tolerance = 0;  // any rise beyond the median would be "bad"
  std::vector<RunRecord> runs(10);
  for (size_t i = 0; i < runs.size(); ++i) {
    runs[i].result.read = ExponentialRun(100'000, 100e3, i + 1);
    runs[i].metrics = ExtractMetrics(runs[i].result);
  }
  const Baseline baseline = LearnBaseline(runs, 0, policy);
  const MetricBaseline* p999 = baseline.Find("read", "lat_p99_9_seconds");
  ASSERT_NE(p999, nullptr);
  EXPECT_EQ(p999->samples, 1'000'000u);
  EXPECT_LT(p999->interval_low, p999->median);
  EXPECT_GT(p999->interval_high, p999->median);

  int raised_p99 = 0;
  for (uint64_t seed = 100; seed < 140; ++seed) {
    ProbeResult run;
    run.read = ExponentialRun(20'000, 100e3, seed);
    const std::vector<MetricSample> metrics = ExtractMetrics(run);
    for (const MetricVerdict& v : Compare(baseline, metrics, policy, &run)) {
      if (v.metric == "lat_p99_9_seconds") {
        EXPECT_FALSE(v.judged);
        EXPECT_FALSE(v.bad);
        EXPECT_NE(v.note.find("needs 50000 I/Os, the run had 20000"), std::string::npos) << v.note;
      }
      if (v.metric == "lat_p99_seconds") raised_p99 += v.bad;
    }
  }
  EXPECT_EQ(raised_p99, 0);

  // The same comparison without the interval rule calls about half of them bad.
  BaselinePolicy no_interval = policy;
  no_interval.quantile_confidence = 0;
  int raised_without = 0;
  for (uint64_t seed = 100; seed < 140; ++seed) {
    ProbeResult run;
    run.read = ExponentialRun(20'000, 100e3, seed);
    for (const MetricVerdict& v : Compare(baseline, ExtractMetrics(run), no_interval, &run)) {
      if (v.metric == "lat_p99_seconds") raised_without += v.bad;
    }
  }
  EXPECT_GT(raised_without, 5);
}

TEST(QuantileRulesTest, ARealShiftLeavesTheInterval) {
  BaselinePolicy policy;
  std::vector<RunRecord> runs(10);
  for (size_t i = 0; i < runs.size(); ++i) {
    runs[i].result.read = ExponentialRun(100'000, 100e3, i + 1);
    runs[i].metrics = ExtractMetrics(runs[i].result);
  }
  const Baseline baseline = LearnBaseline(runs, 0, policy);
  ProbeResult slow;
  slow.read = ExponentialRun(100'000, 300e3, 99);  // a disk three times slower
  int bad = 0;
  for (const MetricVerdict& v : Compare(baseline, ExtractMetrics(slow), policy, &slow)) {
    EXPECT_TRUE(v.judged) << v.metric;
    bad += v.bad;
    if (v.metric == "lat_p99_9_seconds") {
      EXPECT_TRUE(v.bad) << v.note;
    }
  }
  EXPECT_GE(bad, 4);  // lat mean, p50, p90, p99, p99.9
}

}  // namespace
}  // namespace iowatch::probes
