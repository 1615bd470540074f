// A log-linear latency histogram in fio's scheme (stat.h, FIO_IO_U_PLAT_*):
// values below 2^(kBits+1) ns are counted exactly; above, each power of two is
// split into 2^kBits equal buckets, so a bucket's width is at most 1/2^kBits
// of its lower bound and a percentile reported as the bucket midpoint is off
// by at most kMaxRelativeError of the true sample value. Values beyond the
// last group land in the last bucket (fio caps at about 17 s; we cover up to
// 2^kGroups ns, stated by MaxExactNs()).
// Percentile p follows fio: the first bucket whose cumulative count reaches
// p/100 × N, reported as that bucket's midpoint (exact values below 128 ns).
// Thread-safety: none; one owner. Merge combines runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace iowatch::probes {

// fio's default clat percentile list.
std::span<const double> DefaultPercentiles();

class LatencyHistogram {
 public:
  static constexpr unsigned kBits = 6;  // 64 buckets per power of two, as fio
  static constexpr double kMaxRelativeError = 1.0 / 128;  // midpoint error bound

  LatencyHistogram();

  void Record(uint64_t value_ns);
  void Merge(const LatencyHistogram& other);
  void Reset();

  uint64_t Count() const { return count_; }
  // The value reported for percentile p (0 < p ≤ 100), 0 when empty.
  uint64_t Percentile(double p) const;
  // How many recorded values are ≤ bound_ns, up to one bucket's resolution:
  // counts whole buckets whose upper bound is ≤ bound_ns. For Prometheus
  // cumulative buckets.
  uint64_t CountAtOrBelow(uint64_t bound_ns) const;

  // Raw buckets, for storage and exact round-trips (FromBuckets).
  std::span<const uint64_t> Buckets() const { return buckets_; }
  static size_t BucketCount();
  static size_t BucketIndex(uint64_t value_ns);
  static uint64_t BucketLowerBound(size_t index);  // smallest value in the bucket
  static uint64_t BucketUpperBound(size_t index);  // largest value in the bucket
  // Rebuilds a histogram from Buckets(); false if the size does not match.
  bool AssignBuckets(std::span<const uint64_t> buckets);

 private:
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
};

}  // namespace iowatch::probes
