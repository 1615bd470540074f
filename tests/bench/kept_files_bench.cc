// A procfs file read each sample, opened afresh (FileTree::Read: open,
// fstat, read, read, close) against read through a descriptor kept open
// (KeptFiles: pread, pread), in the same run, on this host's /proc.
//
//   build/tests/bench/kept_files_bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <string>

#include "common/file_tree.h"

namespace {

const char* const kFiles[] = {"uptime", "self/stat", "self/io", "vmstat", "diskstats"};

void OpenedAfresh(benchmark::State& state) {
  const iowatch::FileTree proc("/proc");
  const char* file = kFiles[state.range(0)];
  for (auto _ : state) benchmark::DoNotOptimize(proc.Read(file));
  state.SetLabel(file);
}

void KeptOpen(benchmark::State& state) {
  iowatch::KeptFiles kept;
  const iowatch::FileTree proc = iowatch::FileTree("/proc").Keeping(kept);
  const char* file = kFiles[state.range(0)];
  for (auto _ : state) benchmark::DoNotOptimize(proc.Read(file));
  state.SetLabel(file);
}

BENCHMARK(OpenedAfresh)->DenseRange(0, 4);
BENCHMARK(KeptOpen)->DenseRange(0, 4);

}  // namespace

BENCHMARK_MAIN();
