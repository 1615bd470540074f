// /proc/diskstats: the parser, then the iostat derivation between two fuzzed
// samples: whatever the counters (wrapped, reset, huge, zero intervals),
// every derived series is a finite number >= 0.
#include <cmath>
#include <map>
#include <string>

#include "collectors/disk/diskstats.h"
#include "collectors/disk/iostat.h"
#include "daemon/sampling/derived_series.h"
#include "tests/fuzz/fuzz_input.h"

using iowatch::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [first, second] = iowatch::fuzz::TwoSamples(iowatch::fuzz::AsText(data, size));
  const auto prev = iowatch::collectors::ParseDiskstats(first, "prev");
  const auto cur = iowatch::collectors::ParseDiskstats(second, "cur");
  std::map<std::string, const iowatch::collectors::DiskCounters*> before;
  for (const auto& disk : prev.disks) before[disk.name] = &disk.counters;
  const uint64_t interval_cs = size % 1000;  // 0 included: no interval at all
  for (const auto& disk : cur.disks) {
    const auto it = before.find(disk.name);
    if (it == before.end()) continue;
    const auto row = iowatch::collectors::ComputeIostat(*it->second, disk.counters, interval_cs);
    for (const auto& series : iowatch::daemon::IostatSeriesTable()) {
      const double value = series.value(row);
      Require(std::isfinite(value) && value >= 0);
    }
  }
  return 0;
}
