// A synthetic disk and the series helpers shared by the baseline series tests
// and the false-alarm measurement (tests/bench/baseline_false_alarms.cc): a
// seeded QD1 random-read probe with lognormal run-to-run noise, baselines
// learned from it, and series of runs compared against a baseline through the
// hysteresis tracker, reported as the state changes they cause.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

#include "probes/verdicts/baseline.h"

namespace iowatch::probes::test_data {

// A direction of `ios` 4 KiB I/Os over `seconds`, every one `latency_ns`
// long (submission included: lat = clat), histograms filled: every quantile
// is the latency, as the judge's quantile rules read it.
inline void FillEqualLatencies(DirectionStats& d, uint64_t ios, uint64_t latency_ns,
                               double seconds) {
  d.ios = ios;
  d.bytes = ios * 4096;
  d.runtime =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
  for (uint64_t i = 0; i < ios; ++i) {
    d.lat.Add(latency_ns);
    d.lat_histogram.Record(latency_ns);
    d.clat.Add(latency_ns);
    d.clat_histogram.Record(latency_ns);
  }
}

inline Baseline MakeBaseline(std::vector<MetricBaseline> metrics) {
  Baseline b;
  b.job = "randread";
  b.metrics = std::move(metrics);
  return b;
}

// A QD1 4 KiB random-read probe on a disk doing ~10,000 IOPS. Each run draws
// lognormal noise: IOPS (and with it bandwidth and the mean/p50/p90
// latencies, which at QD1 are ~1/IOPS) with σ = iops_sigma, p99 and p99.9
// independently with σ = tail_sigma. `speed` < 1 is a slower disk: throughput
// × speed, every latency ÷ speed.
class SyntheticDisk {
 public:
  SyntheticDisk(uint64_t seed, double iops_sigma, double tail_sigma)
      : rng_(seed), iops_sigma_(iops_sigma), tail_sigma_(tail_sigma) {}

  std::vector<MetricSample> Run(double speed) {
    const double iops = 10000 * speed * std::exp(iops_sigma_ * normal_(rng_));
    const double mean_s = 1 / iops;
    const double p99_s = 300e-6 / speed * std::exp(tail_sigma_ * normal_(rng_));
    const double p999_s = 900e-6 / speed * std::exp(tail_sigma_ * normal_(rng_));
    return {{"read", "iops", iops},
            {"read", "bandwidth_bytes", iops * 4096},
            {"read", "clat_mean_seconds", mean_s * 0.98},
            {"read", "clat_p50_seconds", mean_s * 0.9},
            {"read", "clat_p90_seconds", mean_s * 1.4},
            {"read", "clat_p99_seconds", p99_s},
            {"read", "clat_p99_9_seconds", p999_s},
            {"read", "lat_mean_seconds", mean_s}};
  }

 private:
  std::mt19937_64 rng_;
  std::normal_distribution<double> normal_;
  double iops_sigma_;
  double tail_sigma_;
};

// A baseline learned from `runs` runs at full speed. With the default 5 it
// carries the learning error a real one does; with thousands it is what a
// long learning period converges to (the true medians and spreads), which
// separates the run-to-run noise from the baseline's own error.
inline Baseline Learn(SyntheticDisk& disk, uint32_t runs) {
  std::vector<std::vector<MetricSample>> learning;
  for (uint32_t i = 0; i < runs; ++i) learning.push_back(disk.Run(1));
  return MakeBaseline(LearnMetrics(learning));
}
inline constexpr uint32_t kAccurate = 4001;

struct SeriesEvent {
  size_t run;  // index among the compared runs (the learning runs came before)
  RegressionChange change;
};

// Compares `runs` runs at speed(i) with `baseline` through a tracker;
// returns every state change.
inline std::vector<SeriesEvent> RunSeries(SyntheticDisk& disk, const Baseline& baseline,
                                          size_t runs, const std::function<double(size_t)>& speed,
                                          const BaselinePolicy& policy = {}) {
  RegressionTracker tracker(policy.hysteresis);
  std::vector<SeriesEvent> events;
  for (size_t i = 0; i < runs; ++i) {
    const auto verdicts = Compare(baseline, disk.Run(speed(i)), policy);
    for (RegressionChange& c : tracker.Update(verdicts)) events.push_back({i, std::move(c)});
  }
  return events;
}

inline double Steady(size_t) { return 1.0; }

inline size_t Raises(const std::vector<SeriesEvent>& events) {
  size_t n = 0;
  for (const SeriesEvent& e : events) n += e.change.regressed;
  return n;
}

inline const SeriesEvent* FirstEvent(const std::vector<SeriesEvent>& events,
                                     std::string_view metric, bool regressed) {
  for (const SeriesEvent& e : events) {
    if (e.change.metric == metric && e.change.regressed == regressed) return &e;
  }
  return nullptr;
}

}  // namespace iowatch::probes::test_data
