// The probe runner's own cost per I/O, measured with the null engine (no I/O
// at all): offsets, timestamps, statistics and histograms. Compare with fio's
// null engine: `fio --name=n --ioengine=null --rw=randread --bs=4k --size=1g
// --time_based --runtime=2 --iodepth=1`.
#include <benchmark/benchmark.h>

#include "probes/engines/null_engine.h"
#include "probes/run/job_runner.h"

namespace {

using namespace iowatch::probes;

void BM_NullEngineRun(benchmark::State& state) {
  JobSpec spec;
  spec.filename = "/dev/null";
  spec.rw = RwMode::kRandRead;
  spec.size = 1ULL << 30;
  spec.number_ios = 1'000'000;
  spec.iodepth = static_cast<uint32_t>(state.range(0));
  spec.engine = EngineKind::kNull;
  const RunTarget target{-1, 0, spec.size, 4096, 1};
  uint64_t ios = 0;
  for (auto _ : state) {
    NullEngine engine;
    auto result = RunJob(spec, engine, target, RunOptions{});
    if (!result) state.SkipWithError(result.error().message.c_str());
    ios += result->read.ios;
  }
  state.SetItemsProcessed(static_cast<int64_t>(ios));
}
BENCHMARK(BM_NullEngineRun)->Arg(1)->Arg(32)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
