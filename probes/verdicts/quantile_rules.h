// What a latency quantile from n samples can carry. Two rules keep
// a tail figure that rests on a handful of I/Os from raising anything:
//
// Sample count: a quantile q is judged only from at least k / (1 − q) I/Os,
// i.e. with at least k of them at or beyond it (k = 50: p99 needs 5,000 I/Os,
// p99.9 50,000). A 2-second QD1 run of 20,000 I/Os has its p99.9 on 20
// samples; measured on this VM it moved between 169 µs and 872 µs from one
// healthy run to the next.
//
// Confidence interval: the q quantile of n samples lies, with confidence c,
// between the order statistics of ranks n·q ∓ z·√(n·q·(1 − q)) (the normal
// approximation of the binomial count of samples below the true quantile;
// z = Φ⁻¹((1 + c) / 2), 2.58 for c = 0.99). The bounds are read from the
// run's stored histogram at those ranks, so they carry its shape: a long
// tail gets a wide interval. A shift is real only when the run's interval
// and the baseline's (from the pooled histograms of its runs) do not overlap.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "probes/stats/latency_histogram.h"

namespace iowatch::probes {

// ⌈k / (1 − q)⌉; 0 for q ≤ 0 (not a quantile) or k = 0 (rule off).
uint64_t MinSamplesForQuantile(double q, uint32_t k);

// Φ⁻¹((1 + confidence) / 2): the two-sided normal quantile, confidence in (0, 1).
double TwoSidedZ(double confidence);

struct QuantileInterval {
  double low_seconds = 0;
  double high_seconds = 0;
  bool operator==(const QuantileInterval&) const = default;
};

// The order-statistic interval of the q quantile (0 < q < 1) of the values
// in `histogram` at confidence `confidence`; {0, 0} when it is empty.
QuantileInterval QuantileConfidenceInterval(const LatencyHistogram& histogram, double q,
                                            double confidence);

}  // namespace iowatch::probes
