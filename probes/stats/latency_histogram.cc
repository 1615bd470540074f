#include "probes/stats/latency_histogram.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>

namespace iowatch::probes {
namespace {

constexpr uint64_t kBucketsPerGroup = uint64_t{1} << LatencyHistogram::kBits;  // fio's PLAT_VAL
// Values below this have a bucket each: two groups' worth, as in fio.
constexpr uint64_t kExactLimit = 2 * kBucketsPerGroup;
constexpr size_t kBucketCount = LatencyHistogram::kGroups * kBucketsPerGroup;

constexpr std::array<double, 17> kDefaultPercentiles{1,  5,  10, 20, 30,   40,   50,    60,   70,
                                                     80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};

// Bucket i ≥ kExactLimit sits in group i / 2^kBits; group g drops g − 1 low
// bits of the value, so its buckets are 2^(g−1) wide.
unsigned DroppedBits(size_t index) {
  return static_cast<unsigned>(index >> LatencyHistogram::kBits) - 1;
}

}  // namespace

std::span<const double> DefaultPercentiles() { return kDefaultPercentiles; }

LatencyHistogram::LatencyHistogram() : buckets_(kBucketCount, 0) {}

size_t LatencyHistogram::BucketCount() { return kBucketCount; }

size_t LatencyHistogram::BucketIndex(uint64_t value_ns) {
  if (value_ns < kExactLimit) return static_cast<size_t>(value_ns);
  // The top kBits + 1 bits of the value pick the bucket: the position of the
  // highest bit picks the group, the kBits below it the bucket in the group.
  const unsigned msb = static_cast<unsigned>(std::bit_width(value_ns)) - 1;
  const unsigned dropped = msb - kBits;
  const uint64_t index =
      ((uint64_t{dropped} + 1) << kBits) + ((value_ns >> dropped) & (kBucketsPerGroup - 1));
  return static_cast<size_t>(std::min<uint64_t>(index, kBucketCount - 1));
}

uint64_t LatencyHistogram::BucketLowerBound(size_t index) {
  if (index < kExactLimit) return index;
  const unsigned dropped = DroppedBits(index);
  const uint64_t offset = index & (kBucketsPerGroup - 1);
  return (uint64_t{1} << (dropped + kBits)) + (offset << dropped);
}

uint64_t LatencyHistogram::BucketUpperBound(size_t index) {
  // The last bucket also takes every value beyond the covered range.
  if (index >= kBucketCount - 1) return std::numeric_limits<uint64_t>::max();
  if (index < kExactLimit) return index;
  return BucketLowerBound(index) + (uint64_t{1} << DroppedBits(index)) - 1;
}

uint64_t LatencyHistogram::BucketMidpoint(size_t index) {
  if (index < kExactLimit) return index;
  // fio's base + (k + 0.5) · width: lower + width / 2, an integer because
  // width ≥ 2 here. Its distance to any value in the bucket is at most
  // width / 2 ≤ lower / 128, which is where kMaxRelativeError comes from.
  return BucketLowerBound(index) + (uint64_t{1} << (DroppedBits(index) - 1));
}

void LatencyHistogram::Record(uint64_t value_ns) {
  ++buckets_[BucketIndex(value_ns)];
  ++count_;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (size_t i = 0; i < kBucketCount; ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
}

void LatencyHistogram::Reset() {
  std::fill(buckets_.begin(), buckets_.end(), 0);
  count_ = 0;
}

uint64_t LatencyHistogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  // fio's calc_clat_percentiles compares `sum >= (long double) p / 100.0 * nr`.
  // Same types here, so ranks agree with fio even where p has no exact binary
  // form (99.9 % of 1000 samples is rank 1000 in fio, not 999).
  long double threshold = static_cast<long double>(p) / 100.0 * static_cast<long double>(count_);
  // fio asserts 0 < p ≤ 100; outside it (or NaN) answer the min or the max
  // rather than an empty bucket's value or none.
  if (!(threshold >= 1)) threshold = 1;
  threshold = std::min(threshold, static_cast<long double>(count_));
  uint64_t sum = 0;
  for (size_t i = 0; i < kBucketCount; ++i) {
    sum += buckets_[i];
    if (static_cast<long double>(sum) >= threshold) return BucketMidpoint(i);
  }
  return BucketMidpoint(kBucketCount - 1);  // unreachable: sum reaches count_
}

uint64_t LatencyHistogram::CountAtOrBelow(uint64_t bound_ns) const {
  // Buckets are contiguous and ordered, so those wholly ≤ bound_ns are the
  // ones before bound_ns's own bucket, plus that one when bound_ns ends it.
  const size_t own = BucketIndex(bound_ns);
  const size_t end = BucketUpperBound(own) == bound_ns ? own + 1 : own;
  uint64_t total = 0;
  for (size_t i = 0; i < end; ++i) total += buckets_[i];
  return total;
}

bool LatencyHistogram::AssignBuckets(std::span<const uint64_t> buckets) {
  if (buckets.size() != kBucketCount) return false;
  std::copy(buckets.begin(), buckets.end(), buckets_.begin());
  count_ = 0;
  for (uint64_t n : buckets_) count_ += n;
  return true;
}

}  // namespace iowatch::probes
