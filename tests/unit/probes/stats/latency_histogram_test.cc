// LatencyHistogram (fio's log-linear layout, fio's percentile rule) and
// RunningStats (fio's Welford mean/stddev), checked against references that
// work from the raw samples: sorted-sample percentiles, two-pass moments and
// brute-force counts.
#include "probes/stats/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/unit/probes/stats/synthetic_latencies.h"

namespace iowatch::probes {
namespace {

using test_data::Distribution;
using test_data::Draw;
using test_data::SyntheticDistributions;

using Histogram = LatencyHistogram;

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

size_t LastBucket() { return Histogram::BucketCount() - 1; }

// The percentile of the raw samples under fio's rule (calc_clat_percentiles:
// the first position whose cumulative count satisfies
// `sum >= (long double) p / 100.0 * nr`), i.e. the sample of rank
// ceil(p/100 · N), computed in the same long double fio uses.
uint64_t SampleRankPercentile(const std::vector<uint64_t>& sorted, double p) {
  const long double threshold =
      static_cast<long double>(p) / 100.0 * static_cast<long double>(sorted.size());
  const auto rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(threshold)));
  return sorted[rank - 1];
}

Histogram Record(const std::vector<uint64_t>& samples) {
  Histogram h;
  for (uint64_t v : samples) h.Record(v);
  return h;
}

// Values of every magnitude up to 2^64: a random bit width, then random bits.
std::vector<uint64_t> AllMagnitudes(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> width(0, 64);
  std::vector<uint64_t> out;
  for (size_t i = 0; i < n; ++i) {
    const int w = width(rng);
    const uint64_t bits = rng();
    out.push_back(w == 0 ? 0 : w == 64 ? bits : (bits >> (64 - w)) | (uint64_t{1} << (w - 1)));
  }
  return out;
}

// ---------------------------------------------------------------- layout

TEST(LatencyHistogramLayout, ExtendsFiosIndexLayout) {
  // Indices worked out by hand from fio's plat_val_to_idx (PLAT_BITS = 6):
  // below 128 the value itself; else msb m, e = m − 6 dropped bits,
  // index = (e + 1)·64 + ((v >> e) & 63).
  EXPECT_EQ(Histogram::BucketCount(), 2048u);  // 32 groups of 64
  EXPECT_EQ(Histogram::BucketIndex(0), 0u);
  EXPECT_EQ(Histogram::BucketIndex(1), 1u);
  EXPECT_EQ(Histogram::BucketIndex(127), 127u);
  EXPECT_EQ(Histogram::BucketIndex(128), 128u);
  EXPECT_EQ(Histogram::BucketIndex(129), 128u);  // buckets 2 wide from 128
  EXPECT_EQ(Histogram::BucketIndex(130), 129u);
  EXPECT_EQ(Histogram::BucketIndex(255), 191u);
  EXPECT_EQ(Histogram::BucketIndex(256), 192u);
  EXPECT_EQ(Histogram::BucketIndex(1000), 317u);               // e = 3: 4·64 + (125 & 63)
  EXPECT_EQ(Histogram::BucketIndex((1ULL << 34) - 1), 1855u);  // fio's last bucket
  EXPECT_EQ(Histogram::BucketIndex(1ULL << 34), 1856u);        // fio would clamp here
  EXPECT_EQ(Histogram::BucketIndex((1ULL << 37) - 1), 2047u);
  EXPECT_EQ(Histogram::BucketIndex(1ULL << 37), 2047u);  // beyond the range: clamped
  EXPECT_EQ(Histogram::BucketIndex(kMax), 2047u);
}

TEST(LatencyHistogramLayout, BucketsTileTheWholeRange) {
  EXPECT_EQ(Histogram::BucketLowerBound(0), 0u);
  EXPECT_EQ(Histogram::BucketUpperBound(LastBucket()), kMax);
  for (size_t i = 0; i < Histogram::BucketCount(); ++i) {
    SCOPED_TRACE(i);
    const uint64_t lower = Histogram::BucketLowerBound(i);
    const uint64_t upper = Histogram::BucketUpperBound(i);
    ASSERT_LE(lower, upper);
    EXPECT_EQ(Histogram::BucketIndex(lower), i);
    EXPECT_EQ(Histogram::BucketIndex(upper), i);
    if (i + 1 < Histogram::BucketCount()) {
      ASSERT_EQ(Histogram::BucketLowerBound(i + 1), upper + 1);  // no gap, no overlap
    }
    if (i < 128) {
      EXPECT_EQ(lower, i);
      EXPECT_EQ(upper, i);
    } else if (i < LastBucket()) {
      EXPECT_LE((upper - lower + 1) * 64, lower);  // a bucket spans ≤ 1/64 of its values
    }
  }
}

TEST(LatencyHistogramLayout, EveryValueLiesWithinItsBucketsBounds) {
  std::vector<uint64_t> values = AllMagnitudes(200000, 7);
  for (uint64_t v = 0; v < (1u << 16); ++v) values.push_back(v);
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t p = uint64_t{1} << bit;
    values.insert(values.end(), {p - 1, p, p + 1});
  }
  values.push_back(kMax);
  for (uint64_t v : values) {
    const size_t i = Histogram::BucketIndex(v);
    ASSERT_LT(i, Histogram::BucketCount()) << v;
    ASSERT_LE(Histogram::BucketLowerBound(i), v) << v;
    ASSERT_GE(Histogram::BucketUpperBound(i), v) << v;
  }
}

TEST(LatencyHistogramLayout, CapCoversAtLeast2To36Ns) {
  const uint64_t cap = Histogram::MaxExactNs();
  EXPECT_GE(cap, 1ULL << 36);
  // The cap is the nominal top of the last bucket: one bucket width above its
  // lower bound, the width being that of the bucket before it.
  const uint64_t last_lower = Histogram::BucketLowerBound(LastBucket());
  const uint64_t width = last_lower - Histogram::BucketLowerBound(LastBucket() - 1);
  EXPECT_EQ(cap, last_lower + width - 1);
  EXPECT_LT(Histogram::BucketIndex(last_lower - 1), LastBucket());
}

TEST(LatencyHistogramLayout, MidpointsFollowFio) {
  // fio's plat_idx_to_val: the value below 128, else base + (k + 0.5)·2^e.
  for (size_t i = 0; i < 128; ++i) EXPECT_EQ(Histogram::BucketMidpoint(i), i);
  EXPECT_EQ(Histogram::BucketMidpoint(128), 129u);                          // 128 + 0.5·2
  EXPECT_EQ(Histogram::BucketMidpoint(191), 255u);                          // 128 + 63.5·2
  EXPECT_EQ(Histogram::BucketMidpoint(317), 1004u);                         // 512 + 61.5·8
  EXPECT_EQ(Histogram::BucketMidpoint(1856), (1ULL << 34) + (1ULL << 27));  // 2^34 + 0.5·2^28
}

TEST(LatencyHistogramLayout, MidpointErrorBoundHoldsAndIsTight) {
  // |midpoint − v| / v is largest at a bucket's ends, so checking both ends of
  // every bucket (the last at its nominal top, MaxExactNs) covers all values.
  double worst = 0;
  for (size_t i = 0; i < Histogram::BucketCount(); ++i) {
    const double mid = static_cast<double>(Histogram::BucketMidpoint(i));
    const uint64_t upper =
        i == LastBucket() ? Histogram::MaxExactNs() : Histogram::BucketUpperBound(i);
    for (uint64_t v : {Histogram::BucketLowerBound(i), upper}) {
      if (v == 0) {
        EXPECT_EQ(mid, 0);
        continue;
      }
      const double error = std::abs(mid - static_cast<double>(v)) / static_cast<double>(v);
      EXPECT_LE(error, Histogram::kMaxRelativeError) << "bucket " << i << " value " << v;
      worst = std::max(worst, error);
    }
  }
  EXPECT_DOUBLE_EQ(worst, 1.0 / 128);  // reached at the bottom of each group
}

// ---------------------------------------------------------------- percentiles

TEST(LatencyHistogram, EmptyReportsZero) {
  const Histogram h;
  EXPECT_EQ(h.Count(), 0u);
  EXPECT_EQ(h.Percentile(50), 0u);
  EXPECT_EQ(h.Percentile(100), 0u);
  EXPECT_EQ(h.CountAtOrBelow(kMax), 0u);
  ASSERT_EQ(h.Buckets().size(), Histogram::BucketCount());
  for (uint64_t n : h.Buckets()) EXPECT_EQ(n, 0u);
}

TEST(LatencyHistogram, SmallValuesGiveExactFioRanks) {
  Histogram h;
  for (uint64_t v = 0; v < 100; ++v) h.Record(v);
  EXPECT_EQ(h.Count(), 100u);
  EXPECT_EQ(h.Percentile(1), 0u);      // rank 1
  EXPECT_EQ(h.Percentile(0.5), 0u);    // 0.5 → rank 1
  EXPECT_EQ(h.Percentile(10.5), 10u);  // 10.5 → rank 11
  EXPECT_EQ(h.Percentile(50), 49u);    // rank 50
  EXPECT_EQ(h.Percentile(99.9), 99u);  // 99.9 → rank 100
  EXPECT_EQ(h.Percentile(100), 99u);
}

TEST(LatencyHistogram, RankFollowsFiosFloatingPointNotDecimalArithmetic) {
  // 99.9 is slightly above 99.9 as a double, so fio needs 999.00…006 of 1000
  // samples: rank 1000, the single slow one, where decimal rounding says 999.
  Histogram h;
  for (int i = 0; i < 999; ++i) h.Record(10);
  h.Record(20);
  EXPECT_EQ(h.Percentile(99.9), 20u);
  EXPECT_EQ(h.Percentile(99.8), 10u);
}

TEST(LatencyHistogram, OutOfRangePercentilesGiveMinAndMax) {
  Histogram h;
  h.Record(5);
  h.Record(90);
  EXPECT_EQ(h.Percentile(0), 5u);
  EXPECT_EQ(h.Percentile(-3), 5u);
  EXPECT_EQ(h.Percentile(150), 90u);
  EXPECT_EQ(h.Percentile(std::nan("")), 5u);
}

TEST(LatencyHistogram, PercentilesWithinErrorBoundOfSortedSamples) {
  std::vector<double> percentiles(DefaultPercentiles().begin(), DefaultPercentiles().end());
  percentiles.insert(percentiles.end(), {0.1, 25, 75, 100});
  for (Distribution& d : SyntheticDistributions()) {
    SCOPED_TRACE(d.name);
    const Histogram h = Record(d.samples);
    std::sort(d.samples.begin(), d.samples.end());
    ASSERT_EQ(h.Count(), d.samples.size());
    for (double p : percentiles) {
      SCOPED_TRACE(p);
      const uint64_t exact = SampleRankPercentile(d.samples, p);
      const uint64_t got = h.Percentile(p);
      if (exact < 128) {
        EXPECT_EQ(got, exact);
      } else {
        const double error = std::abs(static_cast<double>(got) - static_cast<double>(exact));
        EXPECT_LE(error, static_cast<double>(exact) * Histogram::kMaxRelativeError)
            << "got " << got << " exact " << exact;
      }
    }
  }
}

TEST(LatencyHistogram, HugeValuesGoToTheLastBucket) {
  Histogram h;
  h.Record(1000);
  h.Record(Histogram::MaxExactNs() + 1);
  h.Record(1'000'000'000'000);  // 1000 s
  h.Record(kMax);
  EXPECT_EQ(h.Count(), 4u);
  EXPECT_EQ(h.Buckets()[LastBucket()], 3u);
  // Reported at the top of the covered range, not at the sample's value.
  EXPECT_GE(h.Percentile(100), 1ULL << 36);
  EXPECT_LE(h.Percentile(100), Histogram::MaxExactNs());
  EXPECT_EQ(h.CountAtOrBelow(Histogram::MaxExactNs()), 1u);
  EXPECT_EQ(h.CountAtOrBelow(kMax - 1), 1u);
  EXPECT_EQ(h.CountAtOrBelow(kMax), 4u);
}

// ---------------------------------------------------------------- CountAtOrBelow

class CountAtOrBelowTest : public testing::Test {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(99);
    std::lognormal_distribution<double> lognormal(std::log(300e3), 2.0);
    samples_ = Draw(100000, [&] { return lognormal(rng); });
    for (uint64_t v = 0; v < 300; ++v) samples_.push_back(v);
    samples_.insert(samples_.end(), {Histogram::MaxExactNs(), Histogram::MaxExactNs() + 1, kMax});
    histogram_ = Record(samples_);
    std::sort(samples_.begin(), samples_.end());
  }

  // Brute force over the raw samples.
  uint64_t TrueCountAtOrBelow(uint64_t bound) const {
    return static_cast<uint64_t>(std::upper_bound(samples_.begin(), samples_.end(), bound) -
                                 samples_.begin());
  }

  std::vector<uint64_t> samples_;
  Histogram histogram_;
};

TEST_F(CountAtOrBelowTest, ExactAtEveryBucketUpperBound) {
  for (size_t i = 0; i < Histogram::BucketCount(); ++i) {
    const uint64_t bound = Histogram::BucketUpperBound(i);
    ASSERT_EQ(histogram_.CountAtOrBelow(bound), TrueCountAtOrBelow(bound)) << "bound " << bound;
  }
}

TEST_F(CountAtOrBelowTest, ExactBelow128) {
  for (uint64_t bound = 0; bound < 128; ++bound) {
    EXPECT_EQ(histogram_.CountAtOrBelow(bound), TrueCountAtOrBelow(bound)) << bound;
  }
}

TEST_F(CountAtOrBelowTest, NeverOverCountsAndMissesOnlyTheTopSixtyFourth) {
  // Prometheus-style round bounds plus random ones.
  std::vector<uint64_t> bounds = AllMagnitudes(20000, 3);
  for (uint64_t decade = 100; decade <= 10'000'000'000; decade *= 10) {
    bounds.insert(bounds.end(), {decade, 2 * decade + 500, 5 * decade});
  }
  for (uint64_t bound : bounds) {
    SCOPED_TRACE(bound);
    const uint64_t got = histogram_.CountAtOrBelow(bound);
    EXPECT_LE(got, TrueCountAtOrBelow(bound));
    if (bound <= Histogram::MaxExactNs()) {
      // Every sample ≤ bound − bound/64 lies in an earlier bucket.
      EXPECT_GE(got, TrueCountAtOrBelow(bound - bound / 64));
    }
  }
}

TEST_F(CountAtOrBelowTest, MonotoneInTheBound) {
  std::vector<uint64_t> bounds = AllMagnitudes(20000, 11);
  std::sort(bounds.begin(), bounds.end());
  uint64_t previous = 0;
  for (uint64_t bound : bounds) {
    const uint64_t got = histogram_.CountAtOrBelow(bound);
    ASSERT_GE(got, previous) << bound;
    previous = got;
  }
  EXPECT_EQ(histogram_.CountAtOrBelow(kMax), histogram_.Count());
}

// ---------------------------------------------------------------- merge, reset, buckets

TEST(LatencyHistogram, MergeEqualsRecordingEverything) {
  std::vector<Distribution> all = SyntheticDistributions();
  Histogram merged;
  Histogram direct;
  for (const Distribution& d : all) {
    merged.Merge(Record(d.samples));
    for (uint64_t v : d.samples) direct.Record(v);
  }
  merged.Merge(Histogram());  // an empty part changes nothing
  EXPECT_EQ(merged.Count(), direct.Count());
  EXPECT_TRUE(std::ranges::equal(merged.Buckets(), direct.Buckets()));
  for (double p : DefaultPercentiles()) EXPECT_EQ(merged.Percentile(p), direct.Percentile(p)) << p;
}

TEST(LatencyHistogram, ResetForgetsEverything) {
  Histogram h = Record(SyntheticDistributions()[3].samples);
  ASSERT_GT(h.Count(), 0u);
  h.Reset();
  EXPECT_EQ(h.Count(), 0u);
  EXPECT_EQ(h.Percentile(50), 0u);
  EXPECT_TRUE(std::ranges::all_of(h.Buckets(), [](uint64_t n) { return n == 0; }));
  h.Record(42);
  EXPECT_EQ(h.Count(), 1u);
  EXPECT_EQ(h.Percentile(50), 42u);
}

TEST(LatencyHistogram, BucketsRoundTripThroughAssignBuckets) {
  const Histogram original = Record(SyntheticDistributions()[4].samples);
  const std::vector<uint64_t> stored(original.Buckets().begin(), original.Buckets().end());
  Histogram restored;
  restored.Record(7);  // replaced, not added to
  ASSERT_TRUE(restored.AssignBuckets(stored));
  EXPECT_EQ(restored.Count(), original.Count());
  EXPECT_TRUE(std::ranges::equal(restored.Buckets(), original.Buckets()));
  for (double p : DefaultPercentiles()) EXPECT_EQ(restored.Percentile(p), original.Percentile(p));
}

TEST(LatencyHistogram, AssignBucketsRejectsTheWrongSize) {
  Histogram h;
  h.Record(7);
  const std::vector<uint64_t> short_list(Histogram::BucketCount() - 1, 1);
  const std::vector<uint64_t> fio_sized(29 * 64, 1);  // fio's own array
  EXPECT_FALSE(h.AssignBuckets(short_list));
  EXPECT_FALSE(h.AssignBuckets(fio_sized));
  EXPECT_FALSE(h.AssignBuckets({}));
  EXPECT_EQ(h.Count(), 1u);  // untouched
  EXPECT_EQ(h.Percentile(50), 7u);
}

TEST(LatencyHistogram, DefaultPercentilesAreFios) {
  const std::vector<double> fio = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                   80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
  EXPECT_TRUE(std::ranges::equal(DefaultPercentiles(), fio));
}

}  // namespace
}  // namespace iowatch::probes
