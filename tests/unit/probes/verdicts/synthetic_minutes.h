// Synthetic minutes of a disk's production I/O for the passive judge's
// tests: a latency that rises with the rate, each minute's mean scattering by
// the disk's own σ and by its requests' (cv/√n).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "probes/verdicts/passive/passive_window.h"

namespace iowatch::probes::test_data {

// A disk whose mean latency is 200 µs × (1 + rate / 2,000), each request's
// own time scattering with a coefficient of variation `cv`, and the minute
// itself by `sigma` (log units); rates wander between `lo` and `hi`.
struct Disk {
  double lo = 100;
  double hi = 1600;
  double cv = 1.0;
  double sigma = 0.03;
  double slower = 1;  // a fault: every request this many times slower
};

inline double TrueMean(double rate) { return 200e-6 * (1 + rate / 2000); }

// A minute of sda's reads from `start_ms`, its load and latency left to fill.
inline PassiveWindow MinuteFrom(int64_t start_ms) {
  PassiveWindow w;
  w.device = "sda";
  w.op = "read";
  w.size = "all";
  w.start_ms = start_ms;
  w.end_ms = start_ms + 60'000;
  w.mean_bytes = 4096;
  return w;
}

inline std::vector<PassiveWindow> Minutes(const Disk& disk, int count, uint64_t seed,
                                          int64_t from_ms = 0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> rate(std::log(disk.lo), std::log(disk.hi));
  std::normal_distribution<double> normal(0, 1);
  std::vector<PassiveWindow> out;
  for (int i = 0; i < count; ++i) {
    PassiveWindow w = MinuteFrom(from_ms + int64_t{60'000} * i);
    w.rate = std::exp(rate(rng));
    w.requests = static_cast<uint64_t>(w.rate * 60);
    const double n = static_cast<double>(w.requests);
    w.mean_seconds = TrueMean(w.rate) * disk.slower *
                     std::exp(disk.sigma * normal(rng) + disk.cv / std::sqrt(n) * normal(rng));
    out.push_back(w);
  }
  return out;
}

// A bursty disk whose latency falls with load (its threads sleep between
// sparse requests): a minute in `every` is a burst of 600 requests a second
// at 580 µs, steady (σ 7 %); the others 33 a second at 1.2 ms, noisy (σ 35 %).
// The requests arrive whatever the disk does (open loop): a burst minute
// holds eight times a quiet one's requests in flight. `slower` from minute
// `slow_from` on.
inline std::vector<PassiveWindow> BurstyMinutes(int count, uint64_t seed, int every = 4,
                                                double slower = 1, int slow_from = 0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::vector<PassiveWindow> out;
  for (int i = 0; i < count; ++i) {
    PassiveWindow w = MinuteFrom(int64_t{60'000} * i);
    const bool burst = i % every == every - 1;
    w.rate = burst ? 600 : 33;
    w.requests = static_cast<uint64_t>(w.rate * 60);
    w.mean_seconds =
        (burst ? 580e-6 * std::exp(0.07 * normal(rng)) : 1.2e-3 * std::exp(0.35 * normal(rng))) *
        (i >= slow_from ? slower : 1);
    out.push_back(w);
  }
  return out;
}

// A closed-loop disk: half a request in flight at all times, so its rate is
// 0.5 / latency and a slower minute is a lighter one (the tautology a
// falling line would learn).
inline std::vector<PassiveWindow> ClosedLoopMinutes(int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  std::vector<PassiveWindow> out;
  for (int i = 0; i < count; ++i) {
    PassiveWindow w = MinuteFrom(int64_t{60'000} * i);
    w.mean_seconds = 1e-3 * std::exp(0.5 * normal(rng));
    w.rate = 0.5 / w.mean_seconds;
    w.requests = static_cast<uint64_t>(w.rate * 60);
    out.push_back(w);
  }
  return out;
}

}  // namespace iowatch::probes::test_data
