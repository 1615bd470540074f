// Synthetic latency samples shared by the histogram and stats tests: fixed
// seeds, shapes a disk produces (uniform, tiny, exponential, lognormal, and a
// bimodal cache-hit/seek mix).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace iowatch::probes::test_data {

inline std::vector<uint64_t> Draw(size_t n, const std::function<double()>& next) {
  std::vector<uint64_t> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<uint64_t>(std::max(0.0, next())));
  return out;
}

struct Distribution {
  std::string name;
  std::vector<uint64_t> samples;
};

inline std::vector<Distribution> SyntheticDistributions() {
  std::mt19937_64 rng(20240601);
  constexpr size_t kN = 200000;
  std::uniform_real_distribution<double> uniform(0, 2e6);
  std::uniform_int_distribution<uint64_t> tiny(0, 200);          // straddles the exact range
  std::exponential_distribution<double> exponential(1 / 100e3);  // mean 100 µs
  std::lognormal_distribution<double> lognormal(std::log(250e3), 1.2);
  std::normal_distribution<double> fast(80e3, 10e3);  // cache hits…
  std::normal_distribution<double> slow(8e6, 1.5e6);  // …and seeks
  std::bernoulli_distribution is_slow(0.1);
  return {
      {"uniform", Draw(kN, [&] { return uniform(rng); })},
      {"tiny", Draw(kN, [&] { return static_cast<double>(tiny(rng)); })},
      {"exponential", Draw(kN, [&] { return exponential(rng); })},
      {"lognormal", Draw(kN, [&] { return lognormal(rng); })},
      {"bimodal", Draw(kN, [&] { return is_slow(rng) ? slow(rng) : fast(rng); })},
  };
}

}  // namespace iowatch::probes::test_data
