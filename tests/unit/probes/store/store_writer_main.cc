// store_writer: the test driver of tests/e2e/store_kill9.py. Opens the store
// and adds synthetic runs (both directions, a few thousand samples in each
// histogram, metrics) as fast as it can, forever. After each AddRun returns
// it prints "run <id> <run_ops rows> <run_metrics rows>" and flushes, so
// every line the script reads names a committed run it must find again after
// a kill -9.
//
// Usage: store_writer DB_PATH [SEED [DEVICE MODEL]]
// DEVICE ("8:0") and MODEL are the runs' disk, 259:0 "store_writer" by
// default; tests/e2e/baseline_cli.py gives the real disk of the runs' file,
// as a daemon would record it, so that `baseline import` finds it.
// Exit: 2 on bad usage or when the store cannot be opened, 1 when AddRun fails.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "probes/store/store.h"

namespace {

using iowatch::probes::DirectionStats;
using iowatch::probes::RunRecord;

void Fill(DirectionStats& d, std::mt19937_64& rng, size_t n) {
  std::lognormal_distribution<double> latency(std::log(150e3), 0.9);
  for (size_t i = 0; i < n; ++i) {
    const auto clat = static_cast<uint64_t>(latency(rng));
    d.clat.Add(clat);
    d.lat.Add(clat + 900);
    d.clat_histogram.Record(clat);
    d.lat_histogram.Record(clat + 900);
  }
  d.ios = n;
  d.bytes = n * 4096;
  d.runtime = std::chrono::seconds(1);
}

struct Disk {
  std::string device = "259:0";
  std::string model = "store_writer";
};

RunRecord Synthetic(std::mt19937_64& rng, int64_t sequence, const Disk& disk) {
  RunRecord run;
  run.job = sequence % 2 ? "randread-4k" : "randwrite-4k";
  run.device = disk.device;
  run.model = disk.model;
  run.kernel = "test";
  run.start_unix_ms = 1717243200000 + sequence * 1000;
  run.duration_ms = 1000;
  run.result.spec.filename = "/var/tmp/store_writer.probe";
  run.result.spec.rw = iowatch::probes::RwMode::kRandReadWrite;
  Fill(run.result.read, rng, 2000 + static_cast<size_t>(sequence % 1000));
  Fill(run.result.write, rng, 1000);
  for (const char* op : {"read", "write"}) {
    const DirectionStats& d = std::string(op) == "read" ? run.result.read : run.result.write;
    run.metrics.push_back({op, "iops", d.Iops()});
    run.metrics.push_back({op, "clat_mean_seconds", d.clat.Mean() / 1e9});
  }
  return run;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 5 || argc == 4) {
    std::fprintf(stderr, "usage: store_writer DB_PATH [SEED [DEVICE MODEL]]\n");
    return 2;
  }
  const uint64_t seed = argc >= 3 ? std::strtoull(argv[2], nullptr, 10) : 1;
  Disk disk;
  if (argc == 5) disk = {argv[3], argv[4]};
  iowatch::Result<iowatch::probes::Store> store = iowatch::probes::Store::Open(argv[1]);
  if (!store) {
    std::fprintf(stderr, "store_writer: %s\n", store.error().ToString().c_str());
    return 2;
  }
  std::mt19937_64 rng(seed);
  for (int64_t sequence = 0;; ++sequence) {
    const RunRecord run = Synthetic(rng, sequence, disk);
    iowatch::Result<int64_t> id = store->AddRun(run);
    if (!id) {
      std::fprintf(stderr, "store_writer: %s\n", id.error().ToString().c_str());
      return 1;
    }
    std::printf("run %lld 2 %zu\n", static_cast<long long>(*id), run.metrics.size());
    std::fflush(stdout);
  }
}
