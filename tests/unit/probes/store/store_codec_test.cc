// The store's encodings: the histogram blob format byte for byte, its
// decoding errors, the job options text, and RunningStats::FromSummary.
#include "probes/store/store_codec.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/unit/probes/store/store_test_util.h"

namespace iowatch::probes {
namespace {

TEST(HistogramBlob, EmptyIsNoBytes) {
  EXPECT_TRUE(EncodeHistogram(LatencyHistogram()).empty());
  Result<LatencyHistogram> decoded = DecodeHistogram({});
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->Count(), 0u);
}

TEST(HistogramBlob, FormatIsGapAndCountVarints) {
  LatencyHistogram h;
  h.Record(3);                     // bucket 3
  h.Record(3);                     //
  for (int i = 0; i < 300; ++i) {  // bucket 5, count 300 = 0xac 0x02
    h.Record(5);
  }
  const uint64_t big = 1'000'000'000;  // 1 s
  const size_t index = LatencyHistogram::BucketIndex(big);
  h.Record(big);
  const size_t gap = index - 6;
  ASSERT_GE(gap, 128u);
  ASSERT_LT(gap, 16384u);
  const std::vector<uint8_t> want{1,
                                  3,
                                  2,
                                  1,
                                  0xac,
                                  0x02,
                                  static_cast<uint8_t>(0x80 | (gap & 0x7f)),
                                  static_cast<uint8_t>(gap >> 7),
                                  1};
  EXPECT_EQ(EncodeHistogram(h), want);
  Result<LatencyHistogram> decoded = DecodeHistogram(want);
  ASSERT_TRUE(decoded);
  EXPECT_TRUE(std::ranges::equal(decoded->Buckets(), h.Buckets()));
  EXPECT_EQ(decoded->Count(), 303u);
}

TEST(HistogramBlob, LargeCountsAndTheLastBucketRoundTrip) {
  std::vector<uint64_t> buckets(LatencyHistogram::BucketCount(), 0);
  buckets.front() = 1;
  buckets[1000] = uint64_t{1} << 62;
  buckets.back() = 12345;
  LatencyHistogram h;
  ASSERT_TRUE(h.AssignBuckets(buckets));
  Result<LatencyHistogram> decoded = DecodeHistogram(EncodeHistogram(h));
  ASSERT_TRUE(decoded) << decoded.error().ToString();
  EXPECT_TRUE(std::ranges::equal(decoded->Buckets(), buckets));
}

TEST(HistogramBlob, RealisticHistogramsAreSmall) {
  std::mt19937_64 rng(1);
  DirectionStats d;
  test_store::Fill(d, rng, 100000, 200e3);
  const std::vector<uint8_t> blob = EncodeHistogram(d.clat_histogram);
  EXPECT_LT(blob.size(), 2048u);  // ~450 buckets in use; raw they would be 16 KiB
  Result<LatencyHistogram> decoded = DecodeHistogram(blob);
  ASSERT_TRUE(decoded);
  test_store::ExpectSameHistogram(*decoded, d.clat_histogram);
}

TEST(HistogramBlob, CorruptBlobsAreErrors) {
  const std::pair<std::vector<uint8_t>, std::string> cases[] = {
      {{2, 0, 1}, "histogram blob: unknown format 2 (expected 1)"},
      {{1, 0}, "histogram blob: truncated or oversized varint at byte 1"},
      {{1, 0x80}, "histogram blob: truncated or oversized varint at byte 1"},
      {{1, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02},
       "histogram blob: truncated or oversized varint at byte 1"},
      {{1, 0, 0}, "histogram blob: zero count at byte 1"},
      {{1, 0x80, 0x10, 1}, "histogram blob: bucket index past 2047 at byte 1"},
      {{1, 0, 1, 0xff, 0x0f, 1}, "histogram blob: bucket index past 2047 at byte 3"},
      {{1, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 1},
       "histogram blob: total count overflows 64 bits"},
  };
  for (const auto& [blob, want] : cases) {
    Result<LatencyHistogram> decoded = DecodeHistogram(blob);
    ASSERT_FALSE(decoded) << want;
    EXPECT_EQ(decoded.error().code, ErrorCode::kParse);
    EXPECT_EQ(decoded.error().message, want);
  }
}

TEST(JobOptionsText, RoundTripsEscapesAndFlags) {
  const JobSpec spec = test_store::SampleSpec();
  const std::string text = JobOptionsText(spec);
  EXPECT_EQ(text,
            "name=randrw-4k;filename=/var/tmp/odd\\;name\\\\:with\\\\escapes;rw=randrw;bs=4k;"
            "ioengine=io_uring;iodepth=4;direct=1;size=64m;runtime=5s;time_based=;rwmixread=70");
  Result<JobSpec> parsed = ParseJobOptionsText(text);
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(*parsed, spec);
}

TEST(JobOptionsText, MalformedTextIsAnError) {
  Result<JobSpec> parsed = ParseJobOptionsText("name=x;filename");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message, "job options: expected name=value, found \"filename\"");
  EXPECT_FALSE(ParseJobOptionsText("name=x;bs=4q;filename=/f"));
}

TEST(RunningStatsFromSummary, ReportsTheSameFiguresAndMerges) {
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> draw(std::log(100e3), 1.0);
  int exact = 0;
  constexpr int kTrials = 2000;
  for (int trial = 0; trial < kTrials; ++trial) {
    RunningStats a;
    RunningStats b;
    const int n = 2 + trial % 50;
    for (int i = 0; i < n; ++i) (i % 3 ? a : b).Add(static_cast<uint64_t>(draw(rng)));
    const RunningStats copy =
        RunningStats::FromSummary(a.Count(), a.Min(), a.Max(), a.Mean(), a.StdDev());
    EXPECT_EQ(copy.Count(), a.Count());
    EXPECT_EQ(copy.Min(), a.Min());
    EXPECT_EQ(copy.Max(), a.Max());
    EXPECT_EQ(copy.Mean(), a.Mean());
    EXPECT_DOUBLE_EQ(copy.StdDev(), a.StdDev());
    exact += copy.StdDev() == a.StdDev();
    RunningStats merged = copy;
    merged.Merge(b);
    RunningStats want = a;
    want.Merge(b);
    EXPECT_DOUBLE_EQ(merged.Mean(), want.Mean());
    EXPECT_NEAR(merged.StdDev(), want.StdDev(), want.StdDev() * 1e-12);
  }
  EXPECT_GT(exact, kTrials * 9 / 10);  // most come back bit for bit
  const RunningStats none = RunningStats::FromSummary(0, 5, 5, 5, 5);
  EXPECT_EQ(none.Count(), 0u);
  EXPECT_EQ(none.Min(), 0u);
  const RunningStats one = RunningStats::FromSummary(1, 7, 7, 7, 0);
  EXPECT_EQ(one.StdDev(), 0);
  EXPECT_EQ(one.Min(), 7u);
}

}  // namespace
}  // namespace iowatch::probes
