// Cost of rendering /metrics for 1,000 devices, without the socket: the sample
// of a generated tree (diskstats' lines and each device's sysfs files, the
// sampler's defaults), rendered piece by piece as the HTTP server sends it.
// The daemon's own time per scrape, measured beside node_exporter, is
// serve_vs_node_exporter.py's; this isolates the text, which is most of it.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "common/file_tree.h"
#include "daemon/metrics/metrics_renderer.h"
#include "daemon/sources/sampler.h"
#include "tests/bench/synthetic_diskstats.h"
#include "tests/unit/daemon/sources/test_sampler_options.h"

namespace {

namespace fs = std::filesystem;
using iowatch::FileTree;
using iowatch::daemon::MetricsCursor;
using iowatch::daemon::RenderSnapshot;
using iowatch::daemon::Sampler;
using iowatch::daemon::SamplerOptions;
using iowatch::daemon::Snapshot;

constexpr int kDevices = 1000;
constexpr size_t kPieceBytes = 60 * 1024;  // the HTTP server's piece

void Write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// SyntheticDiskstats' devices (dm-0, dm-1, ...) with the sysfs files the disk
// source reads at discovery.
void WriteSysfs(const fs::path& sys) {
  for (int i = 0; i < kDevices; ++i) {
    const fs::path d = sys / "block" / fmt::format("dm-{}", i);
    Write(d / "dev", fmt::format("253:{}\n", i));
    Write(d / "dm/name", fmt::format("vg-lv{}\n", i));
    Write(d / "size", "2097152\n");
    for (const auto& [attr, value] : {std::pair{"rotational", "0"},
                                      {"logical_block_size", "512"},
                                      {"physical_block_size", "4096"},
                                      {"scheduler", "[none] mq-deadline"},
                                      {"nr_requests", "1023"},
                                      {"max_sectors_kb", "1280"},
                                      {"read_ahead_kb", "128"}}) {
      Write(d / "queue" / attr, std::string(value) + "\n");
    }
  }
}

std::shared_ptr<const Snapshot> TwoSamples(const fs::path& root) {
  // Nothing from outside the tree: the host's kernel log, smartctl, dmsetup.
  SamplerOptions options = iowatch::daemon::TestSamplerOptions();
  Sampler sampler(std::move(options));
  const FileTree procfs((root / "proc").string()), sysfs((root / "sys").string());
  // Rates are over /proc/uptime's interval: one second apart.
  Write(root / "proc/uptime", "1000.00 1900.00\n");
  Write(root / "proc/diskstats", iowatch::bench::SyntheticDiskstats(kDevices, 1000003));
  sampler.Collect(procfs, sysfs, 1.7e9);
  Write(root / "proc/uptime", "1001.00 1901.80\n");
  Write(root / "proc/diskstats", iowatch::bench::SyntheticDiskstats(kDevices, 1000103));
  return sampler.Collect(procfs, sysfs, 1.7e9 + 1);
}

void BM_Render1000Devices(benchmark::State& state) {
  std::string dir = (fs::temp_directory_path() / "render_bench.XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) {
    state.SkipWithError("mkdtemp failed");
    return;
  }
  WriteSysfs(fs::path(dir) / "sys");
  const std::shared_ptr<const Snapshot> snapshot = TwoSamples(dir);
  fs::remove_all(dir);
  const int64_t lines = std::ranges::count(RenderSnapshot(*snapshot), '\n');
  std::string piece;
  piece.reserve(2 * kPieceBytes);
  for (auto _ : state) {
    MetricsCursor cursor(snapshot);
    do {
      piece.clear();
    } while (cursor.Next(piece, kPieceBytes));
    benchmark::DoNotOptimize(piece);
  }
  state.counters["lines"] = static_cast<double>(lines);
  state.SetItemsProcessed(state.iterations() * lines);
}
BENCHMARK(BM_Render1000Devices)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
