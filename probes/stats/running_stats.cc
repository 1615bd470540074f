#include "probes/stats/running_stats.h"

#include <algorithm>
#include <cmath>

namespace iowatch::probes {

RunningStats RunningStats::FromSummary(uint64_t count, uint64_t min, uint64_t max, double mean,
                                       double stddev) {
  RunningStats stats;
  if (count == 0) return stats;
  stats.count_ = count;
  stats.min_ = min;
  stats.max_ = max;
  stats.mean_ = mean;
  stats.m2_ = count > 1 ? stddev * stddev * static_cast<double>(count - 1) : 0;
  return stats;
}

void RunningStats::Add(uint64_t value_ns) {
  // Welford's update, as fio's add_stat_sample: accumulating deviations from
  // the running mean instead of Σx and Σx² keeps the variance accurate when
  // the spread is tiny next to the values (Σx² would cancel catastrophically).
  const double value = static_cast<double>(value_ns);
  ++count_;
  const double delta = value - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (value - mean_);
  min_ = std::min(min_, value_ns);
  max_ = std::max(max_, value_ns);
}

void RunningStats::Merge(const RunningStats& other) {
  if (other.count_ == 0) return;
  if (count_ == 0) {
    *this = other;
    return;
  }
  // Chan et al.'s pairwise combination, as fio's sum_stat. The mean moves by
  // a weighted share of delta rather than fio's (m_a·n_a + m_b·n_b) / n, and
  // the counts multiply in double: both avoid overflow and lost digits when
  // the counts are large.
  const double n_a = static_cast<double>(count_);
  const double n_b = static_cast<double>(other.count_);
  const double n = n_a + n_b;
  const double delta = other.mean_ - mean_;
  mean_ += delta * (n_b / n);
  m2_ += other.m2_ + delta * delta * (n_a * (n_b / n));
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

double RunningStats::StdDev() const {
  if (count_ < 2) return 0;
  return std::sqrt(m2_ / static_cast<double>(count_ - 1));
}

}  // namespace iowatch::probes
