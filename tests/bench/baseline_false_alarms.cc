// Measures the baseline policy's false alarms: regressions raised (all
// metrics) per 10,000 runs of a stable synthetic disk for a few noise levels,
// over many seeds, each a fresh baseline; the default policy with a 5-run and
// an accurate baseline, then variants. Not a check, a program run by hand:
//
//   baseline_false_alarms [seeds]    (default 200)
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <utility>
#include <vector>

#include "probes/verdicts/baseline.h"
#include "tests/unit/probes/verdicts/synthetic_disk.h"

namespace {

using namespace iowatch::probes;
using namespace iowatch::probes::test_data;

struct Variant {
  const char* name;
  BaselinePolicy policy;
  uint32_t learning_runs;
};

void Measure(uint64_t seeds) {
  constexpr size_t kRuns = 10000;
  BaselinePolicy k4, k5, n10;
  k4.hysteresis = 4;
  k5.hysteresis = 5;
  n10.runs = 10;
  const std::vector<Variant> variants = {{"default (N=5, K=3)", {}, 5},
                                         {"accurate baseline, K=3", {}, kAccurate},
                                         {"N=10, K=3", n10, 10},
                                         {"N=5, K=4", k4, 5},
                                         {"N=5, K=5", k5, 5}};
  const std::vector<std::pair<double, double>> levels = {{0.04, 0.08}, {0.08, 0.15}, {0.10, 0.20},
                                                         {0.12, 0.25}, {0.16, 0.30}, {0.20, 0.40}};
  std::printf("%-24s %6s %6s %14s %14s %16s\n", "policy", "σ_iops", "σ_tail", "raises/10k",
              "iops raises/10k", "baselines alarm");
  for (const Variant& variant : variants) {
    for (const auto& [iops_sigma, tail_sigma] : levels) {
      size_t raises = 0, iops_raises = 0, alarmed = 0;
      for (uint64_t seed = 1; seed <= seeds; ++seed) {
        SyntheticDisk disk(seed * 7919, iops_sigma, tail_sigma);
        const Baseline baseline = Learn(disk, variant.learning_runs);
        size_t here = 0;
        for (const SeriesEvent& e : RunSeries(disk, baseline, kRuns, Steady, variant.policy)) {
          if (!e.change.regressed) continue;
          ++here;
          iops_raises += e.change.metric == "iops";
        }
        raises += here;
        alarmed += here > 0;
      }
      const double per_10k = 10000.0 / (static_cast<double>(seeds) * kRuns);
      std::printf("%-24s %6.2f %6.2f %14.3f %14.3f %12zu/%zu\n", variant.name, iops_sigma,
                  tail_sigma, static_cast<double>(raises) * per_10k,
                  static_cast<double>(iops_raises) * per_10k, alarmed, static_cast<size_t>(seeds));
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seeds = 200;
  if (argc > 2) {
    std::fprintf(stderr, "usage: %s [seeds]\n", argv[0]);
    return 2;
  }
  if (argc == 2) {
    const std::string_view arg = argv[1];
    const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), seeds);
    if (ec != std::errc() || end != arg.data() + arg.size() || seeds == 0) {
      std::fprintf(stderr, "usage: %s [seeds]  (seeds: a positive integer, default 200)\n",
                   argv[0]);
      return 2;
    }
  }
  Measure(seeds);
  return 0;
}
