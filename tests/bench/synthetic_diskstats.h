// A synthetic /proc/diskstats of `devices` lines (dm-0, dm-1, ...), every
// counter a multiple of `scale` so that two scales make two samples of the
// same devices. Shared by the benchmarks that cost a sample's diskstats work
// (diskstats_bench.cc) or compare with it (passive_cost.cc).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace iowatch::bench {

inline std::string SyntheticDiskstats(int devices, uint64_t scale) {
  std::string text;
  for (int i = 0; i < devices; ++i) {
    const uint64_t b = scale * (static_cast<uint64_t>(i) + 1);
    text += fmt::format("{:4} {:7} dm-{} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\n", 253,
                        i, i, b * 31, b * 3, b * 977, b * 7, b * 17, b * 5, b * 1311, b * 11, i % 4,
                        b * 13, b * 29, b, b / 2, b * 64, b / 3, b / 5, b / 7);
  }
  return text;
}

}  // namespace iowatch::bench
