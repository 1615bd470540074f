// RunningStats against a two-pass reference, fio's n - 1 stddev, merging,
// and numerical stability over 10^8 samples.
#include "probes/stats/running_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "tests/unit/probes/stats/synthetic_latencies.h"

namespace iowatch::probes {
namespace {

using test_data::Distribution;
using test_data::SyntheticDistributions;

struct TwoPass {
  long double mean = 0;
  long double stddev = 0;  // sample (n − 1)
};

TwoPass Reference(const std::vector<uint64_t>& samples) {
  long double sum = 0;
  for (uint64_t v : samples) sum += static_cast<long double>(v);
  const long double n = static_cast<long double>(samples.size());
  const long double mean = sum / n;
  long double squares = 0;
  for (uint64_t v : samples) {
    const long double d = static_cast<long double>(v) - mean;
    squares += d * d;
  }
  return {mean, std::sqrt(squares / (n - 1))};
}

RunningStats Add(const std::vector<uint64_t>& samples) {
  RunningStats s;
  for (uint64_t v : samples) s.Add(v);
  return s;
}

void ExpectNear(long double got, long double want, long double relative) {
  EXPECT_LE(std::abs(got - want), std::abs(want) * relative)
      << "got " << static_cast<double>(got) << " want " << static_cast<double>(want);
}

TEST(RunningStats, EmptyIsAllZero) {
  const RunningStats s;
  EXPECT_EQ(s.Count(), 0u);
  EXPECT_EQ(s.Min(), 0u);
  EXPECT_EQ(s.Max(), 0u);
  EXPECT_EQ(s.Mean(), 0);
  EXPECT_EQ(s.StdDev(), 0);
}

TEST(RunningStats, SingleSampleHasNoDeviation) {
  RunningStats s;
  s.Add(123456789);
  EXPECT_EQ(s.Count(), 1u);
  EXPECT_EQ(s.Min(), 123456789u);
  EXPECT_EQ(s.Max(), 123456789u);
  EXPECT_EQ(s.Mean(), 123456789.0);
  EXPECT_EQ(s.StdDev(), 0);
}

TEST(RunningStats, SampleStdDevDividesByNMinusOne) {
  // Mean 5, squared deviations sum to 32: population σ would be 2.
  const RunningStats s = Add({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(s.Mean(), 5);
  EXPECT_DOUBLE_EQ(s.StdDev(), std::sqrt(32.0 / 7));
  EXPECT_EQ(s.Min(), 2u);
  EXPECT_EQ(s.Max(), 9u);
}

TEST(RunningStats, ResetStartsOver) {
  RunningStats s = Add({10, 20, 30});
  s.Reset();
  EXPECT_EQ(s.Count(), 0u);
  EXPECT_EQ(s.Min(), 0u);
  s.Add(50);
  EXPECT_EQ(s.Min(), 50u);
  EXPECT_EQ(s.Max(), 50u);
  EXPECT_EQ(s.Mean(), 50);
}

TEST(RunningStats, MatchesTwoPassReferenceOnRandomData) {
  for (const Distribution& d : SyntheticDistributions()) {
    SCOPED_TRACE(d.name);
    const RunningStats s = Add(d.samples);
    const TwoPass want = Reference(d.samples);
    EXPECT_EQ(s.Count(), d.samples.size());
    EXPECT_EQ(s.Min(), *std::ranges::min_element(d.samples));
    EXPECT_EQ(s.Max(), *std::ranges::max_element(d.samples));
    ExpectNear(s.Mean(), want.mean, 1e-12);
    ExpectNear(s.StdDev(), want.stddev, 1e-10);
  }
}

TEST(RunningStats, MergeEqualsAddingEverything) {
  std::vector<uint64_t> all;
  RunningStats merged;
  for (const Distribution& d : SyntheticDistributions()) {
    all.insert(all.end(), d.samples.begin(), d.samples.end());
    merged.Merge(Add(d.samples));  // parts of very different means and sizes
  }
  merged.Merge(RunningStats());
  const RunningStats direct = Add(all);
  EXPECT_EQ(merged.Count(), direct.Count());
  EXPECT_EQ(merged.Min(), direct.Min());
  EXPECT_EQ(merged.Max(), direct.Max());
  const TwoPass want = Reference(all);
  ExpectNear(merged.Mean(), want.mean, 1e-12);
  ExpectNear(merged.StdDev(), want.stddev, 1e-10);
  ExpectNear(merged.StdDev(), direct.StdDev(), 1e-10);
}

TEST(RunningStats, MergeOfSingleSamplesBuildsTheVariance) {
  RunningStats merged;
  for (uint64_t v : {2, 4, 4, 4, 5, 5, 7, 9}) {
    RunningStats one;
    one.Add(v);
    merged.Merge(one);
  }
  EXPECT_EQ(merged.Count(), 8u);
  EXPECT_DOUBLE_EQ(merged.Mean(), 5);
  EXPECT_DOUBLE_EQ(merged.StdDev(), std::sqrt(32.0 / 7));
}

// 10^8 samples of about 1 s spread by ±1 ns: Σx² would be ~10^26 against a
// deviation sum of ~10^8, far past a double's 16 digits, so a naive formula
// returns noise. Samples 10^9 + (i mod 3) have mean 10^9 + 1 and squared
// deviations 2 per triple.
TEST(RunningStats, StableForOneHundredMillionSimilarSamples) {
  constexpr uint64_t kTriples = 33'333'334;  // 100,000,002 samples
  constexpr uint64_t kBase = 1'000'000'000;
  auto sample_stddev = [](double triples) { return std::sqrt(2 * triples / (3 * triples - 1)); };
  RunningStats all;
  for (uint64_t t = 0; t < kTriples; ++t) {
    all.Add(kBase);
    all.Add(kBase + 1);
    all.Add(kBase + 2);
  }
  EXPECT_EQ(all.Count(), 3 * kTriples);
  EXPECT_EQ(all.Min(), kBase);
  EXPECT_EQ(all.Max(), kBase + 2);
  // Welford lands within ~1e-12 of the truth here; Σx² − (Σx)²/n gives ~4e4.
  ExpectNear(all.Mean(), kBase + 1.0, 1e-14);
  ExpectNear(all.StdDev(), sample_stddev(kTriples), 1e-9);
  // Merging two such runs keeps the precision at 2·10^8 samples.
  RunningStats twice = all;
  twice.Merge(all);
  EXPECT_EQ(twice.Count(), 6 * kTriples);
  ExpectNear(twice.Mean(), kBase + 1.0, 1e-14);
  ExpectNear(twice.StdDev(), sample_stddev(2.0 * kTriples), 1e-9);
}

}  // namespace
}  // namespace iowatch::probes
