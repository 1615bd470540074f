// Min, max, mean and sample standard deviation of a stream of latencies,
// computed as fio does (Welford's online algorithm, stddev with n − 1), so a
// summary matches fio's for the same samples. Mergeable (Chan et al.) so runs
// or threads can be combined.
// Thread-safety: none; one owner.
#pragma once

#include <cstdint>

namespace iowatch::probes {

class RunningStats {
 public:
  // Rebuilds the summary a store kept (count, min, max, mean, sample stddev)
  // so that it reports the same figures and still merges correctly. m2 is
  // recomputed from the stddev, so StdDev() comes back usually bit for bit,
  // always within a few ulps.
  static RunningStats FromSummary(uint64_t count, uint64_t min, uint64_t max, double mean,
                                  double stddev);

  void Add(uint64_t value_ns);
  void Merge(const RunningStats& other);
  void Reset() { *this = RunningStats(); }

  uint64_t Count() const { return count_; }
  uint64_t Min() const { return count_ ? min_ : 0; }
  uint64_t Max() const { return max_; }
  double Mean() const { return mean_; }
  double StdDev() const;  // 0 when fewer than two samples

 private:
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  double mean_ = 0;
  double m2_ = 0;  // sum of squared deviations from the mean
};

}  // namespace iowatch::probes
