// Cost of parsing /proc/diskstats and deriving every iostat -x column, per
// device, on a synthetic file of 10,000 devices (a large container host).
// Compare with the cost of the kernel producing the real file: see
// tests/bench/run-bench.sh, which times `cat /proc/diskstats` the same way.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>

#include "collectors/disk/diskstats.h"
#include "collectors/disk/iostat.h"
#include "common/file_tree.h"
#include "tests/bench/synthetic_diskstats.h"

namespace {

using iowatch::bench::SyntheticDiskstats;
using iowatch::collectors::ComputeIostat;
using iowatch::collectors::ParseDiskstats;

void BM_ParseDiskstats(benchmark::State& state) {
  const int devices = static_cast<int>(state.range(0));
  const std::string text = SyntheticDiskstats(devices, 1000003);
  for (auto _ : state) {
    auto parsed = ParseDiskstats(text, "diskstats");
    benchmark::DoNotOptimize(parsed);
  }
  state.SetItemsProcessed(state.iterations() * devices);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ParseDiskstats)->Arg(10000);

void BM_ParseAndDeriveIostat(benchmark::State& state) {
  const int devices = static_cast<int>(state.range(0));
  const auto prev = ParseDiskstats(SyntheticDiskstats(devices, 1000003), "diskstats");
  const std::string cur_text = SyntheticDiskstats(devices, 1000103);
  for (auto _ : state) {
    const auto cur = ParseDiskstats(cur_text, "diskstats");
    double sum = 0;
    for (size_t i = 0; i < cur.disks.size(); ++i) {
      sum += ComputeIostat(prev.disks[i].counters, cur.disks[i].counters, 100).util_pct;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * devices);
}
BENCHMARK(BM_ParseAndDeriveIostat)->Arg(10000);

// The kernel's side: producing /proc/diskstats for the devices of this
// machine (open, read to EOF, close), per device line, measured the same way.
void BM_KernelProducesDiskstats(benchmark::State& state) {
  const iowatch::FileTree procfs("/proc");
  int64_t lines = 0;
  for (auto _ : state) {
    auto text = procfs.Read("diskstats");
    if (!text) {
      state.SkipWithError("cannot read /proc/diskstats");
      return;
    }
    lines = static_cast<int64_t>(std::count(text->begin(), text->end(), '\n'));
    benchmark::DoNotOptimize(text);
  }
  state.SetItemsProcessed(state.iterations() * lines);
  state.counters["devices"] = static_cast<double>(lines);
}
BENCHMARK(BM_KernelProducesDiskstats);

}  // namespace

BENCHMARK_MAIN();
