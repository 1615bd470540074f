// A log-linear latency histogram in fio's scheme (stat.h, FIO_IO_U_PLAT_*):
// values below 2^(kBits+1) ns are counted exactly; above, each power of two is
// split into 2^kBits equal buckets, so a bucket's width is at most 1/2^kBits
// of its lower bound and a percentile reported as the bucket midpoint is off
// by at most kMaxRelativeError of the true sample value. The layout is fio's
// extended by three groups: fio's 29 groups stop at 2^34 ns (about 17 s), our
// kGroups = 32 reach 2^37 ns (about 137 s). Values above MaxExactNs() land in
// the last bucket, which then has no upper bound and no error bound.
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
  static constexpr unsigned kBits = 6;                    // 64 buckets per power of two, as fio
  static constexpr double kMaxRelativeError = 1.0 / 128;  // midpoint error bound
  // Groups of 2^kBits buckets; the first two hold the exact values 0..127.
  static constexpr unsigned kGroups = 32;
  // The largest value with a bucket of its own: 2^37 − 1 ns, about 137 s.
  static constexpr uint64_t MaxExactNs() { return (uint64_t{1} << (kGroups + kBits - 1)) - 1; }

  LatencyHistogram();

  void Record(uint64_t value_ns);
  void Merge(const LatencyHistogram& other);
  void Reset();

  uint64_t Count() const { return count_; }
  // The value reported for percentile p (0 < p ≤ 100), 0 when empty.
  uint64_t Percentile(double p) const;
  // How many recorded values are ≤ bound_ns, up to one bucket's resolution:
  // counts whole buckets whose upper bound is ≤ bound_ns. For Prometheus
  // cumulative buckets. Never over-counts, so a `le` series never claims a
  // sample was faster than it was. Exact when bound_ns < 128 or is some
  // bucket's upper bound; otherwise, for bound_ns ≤ MaxExactNs(), it misses
  // only values in bound_ns's own bucket, all above bound_ns·(1 − 1/64). The
  // last bucket, which takes everything above MaxExactNs(), counts only for
  // bound_ns = UINT64_MAX.
  uint64_t CountAtOrBelow(uint64_t bound_ns) const;

  // Raw buckets, for storage and exact round-trips (AssignBuckets).
  std::span<const uint64_t> Buckets() const { return buckets_; }
  static size_t BucketCount();
  static size_t BucketIndex(uint64_t value_ns);
  static uint64_t BucketLowerBound(size_t index);  // smallest value in the bucket
  static uint64_t BucketUpperBound(size_t index);  // largest value in the bucket
  // The value Percentile reports for the bucket (fio's plat_idx_to_val): the
  // value itself below 128, else lower bound + width / 2.
  static uint64_t BucketMidpoint(size_t index);
  // Rebuilds a histogram from Buckets(); false if the size does not match.
  bool AssignBuckets(std::span<const uint64_t> buckets);

 private:
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
};

}  // namespace iowatch::probes
