#include "probes/verdicts/quantile_rules.h"

#include <algorithm>
#include <cmath>

namespace iowatch::probes {
namespace {

constexpr double kQuantileSecondsPerNs = 1e-9;

// The value at 1-based rank `rank` of the histogram's n values, as
// Percentile reports it (the first bucket whose cumulative count reaches it).
double ValueAtRank(const LatencyHistogram& histogram, double rank) {
  const double n = static_cast<double>(histogram.Count());
  const double clamped = std::clamp(rank, 1.0, n);
  return static_cast<double>(histogram.Percentile(100 * clamped / n)) * kQuantileSecondsPerNs;
}

}  // namespace

uint64_t MinSamplesForQuantile(double q, uint32_t k) {
  if (!(q > 0) || q >= 1 || k == 0) return 0;
  // The small epsilon keeps 50 / (1 − 0.99) at 5,000 rather than 5,001 from
  // the rounding of 1 − 0.99.
  return static_cast<uint64_t>(std::ceil(k / (1 - q) - 1e-6));
}

double TwoSidedZ(double confidence) {
  const double c = std::clamp(confidence, 1e-9, 1 - 1e-12);
  // Solves erf(z / √2) = c by bisection: erf is monotone and 80 halvings of
  // [0, 40] are far below double precision's needs.
  double low = 0;
  double high = 40;
  for (int i = 0; i < 80; ++i) {
    const double mid = (low + high) / 2;
    (std::erf(mid / std::sqrt(2.0)) < c ? low : high) = mid;
  }
  return (low + high) / 2;
}

QuantileInterval QuantileConfidenceInterval(const LatencyHistogram& histogram, double q,
                                            double confidence) {
  if (histogram.Count() == 0) return {};
  const double n = static_cast<double>(histogram.Count());
  const double centre = n * q;
  const double half = TwoSidedZ(confidence) * std::sqrt(n * q * (1 - q));
  return QuantileInterval{ValueAtRank(histogram, std::floor(centre - half)),
                          ValueAtRank(histogram, std::ceil(centre + half))};
}

}  // namespace iowatch::probes
