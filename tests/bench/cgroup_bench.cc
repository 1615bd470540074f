// Cost of the per-cgroup I/O parser (collectors/cgroup/cgroup_io.h) with
// 1,000 cgroups, next to the kernel's cost of producing the files it reads.
//
//   BM_KernelProducesBlkioFiles   1,000 real cgroups made in this host's v1
//                                 blkio hierarchy: open, read to EOF and close
//                                 both files of each (what `cat` of them costs)
//   BM_ScanCgroupIoReal           ScanCgroupIo over the same cgroups: the walk,
//                                 the reads and the parsing, per sample
//   BM_ScanCgroupIoFixture        a generated v2 tree on tmpfs, 1,000 cgroups
//                                 x 4 devices in io.stat: the parsing of four
//                                 devices' lines, without the kernel's work
//
// The real cgroups need root and a v1 blkio mount; they are created under
// <blkio>/iowatch-bench-<pid> and removed at the end. Without them those two
// benchmarks say why and skip.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "collectors/cgroup/cgroup_io.h"
#include "common/file_tree.h"

namespace {

namespace fs = std::filesystem;
using iowatch::FileTree;
using iowatch::collectors::CgroupIoScan;
using iowatch::collectors::CgroupLayout;
using iowatch::collectors::CgroupSelection;
using iowatch::collectors::CgroupVersion;
using iowatch::collectors::DetectCgroupLayout;
using iowatch::collectors::ScanCgroupIo;

constexpr int kCgroups = 1000;

// 1,000 children of a new cgroup in the v1 blkio hierarchy; removed on exit.
class RealCgroups {
 public:
  RealCgroups() {
    const auto layout = DetectCgroupLayout(FileTree("/proc"), FileTree("/sys"));
    if (!layout || layout->version != CgroupVersion::kV1 || geteuid() != 0) {
      why_ = "needs root and a cgroup v1 blkio hierarchy";
      return;
    }
    root_rel_ = layout->io_root + fmt::format("/iowatch-bench-{}", getpid());
    root_ = fs::path("/sys") / root_rel_;
    std::error_code error;
    fs::create_directory(root_, error);
    for (int i = 0; i < kCgroups && !error; ++i) {
      fs::create_directory(root_ / fmt::format("unit-{:04d}.service", i), error);
    }
    if (error) why_ = "cannot create cgroups: " + error.message();
  }
  ~RealCgroups() {
    if (root_.empty()) return;
    for (int i = 0; i < kCgroups; ++i) {
      ::rmdir((root_ / fmt::format("unit-{:04d}.service", i)).c_str());
    }
    ::rmdir(root_.c_str());
  }
  const std::string& why() const { return why_; }
  const fs::path& root() const { return root_; }
  // The layout with the bench cgroup as root: its 1,000 children at depth 1.
  CgroupLayout Layout() const { return {CgroupVersion::kV1, root_rel_, std::nullopt}; }

 private:
  std::string why_;
  std::string root_rel_;
  fs::path root_;
};

RealCgroups& Real() {
  static RealCgroups cgroups;
  return cgroups;
}

void BM_KernelProducesBlkioFiles(benchmark::State& state) {
  if (!Real().why().empty()) {
    state.SkipWithError(Real().why().c_str());
    return;
  }
  std::vector<std::string> files;
  for (int i = 0; i < kCgroups; ++i) {
    for (const char* name :
         {"blkio.throttle.io_service_bytes_recursive", "blkio.throttle.io_serviced_recursive"}) {
      files.push_back((Real().root() / fmt::format("unit-{:04d}.service", i) / name).string());
    }
  }
  for (auto _ : state) {
    for (const std::string& file : files) {
      auto text = iowatch::ReadFile(file);
      benchmark::DoNotOptimize(text);
    }
  }
  state.SetItemsProcessed(state.iterations() * kCgroups);
}
BENCHMARK(BM_KernelProducesBlkioFiles)->Unit(benchmark::kMicrosecond);

void BM_ScanCgroupIoReal(benchmark::State& state) {
  if (!Real().why().empty()) {
    state.SkipWithError(Real().why().c_str());
    return;
  }
  const CgroupLayout layout = Real().Layout();
  const CgroupSelection selection{1, {}, 1'000'000, {}};
  size_t cgroups = 0;
  for (auto _ : state) {
    const CgroupIoScan scan = ScanCgroupIo(FileTree("/sys"), layout, selection);
    cgroups = scan.cgroups.size();
    benchmark::DoNotOptimize(scan);
  }
  state.counters["cgroups"] = static_cast<double>(cgroups);
  state.SetItemsProcessed(state.iterations() * kCgroups);
}
BENCHMARK(BM_ScanCgroupIoReal)->Unit(benchmark::kMicrosecond);

// A v2 tree on tmpfs (/dev/shm): 1,000 services, each with 4 devices in io.stat.
class FixtureTree {
 public:
  FixtureTree() : root_(fs::path("/dev/shm") / fmt::format("iowatch-cgbench-{}", getpid())) {
    const fs::path base = root_ / "fs/cgroup";
    fs::create_directories(base);
    std::string lines;
    for (int d = 0; d < 4; ++d) {
      lines += fmt::format("8:{} rbytes={} wbytes={} rios={} wios={} dbytes=0 dios=0\n", d * 16,
                           (d + 1) * 1048576, d * 4096, (d + 1) * 256, d);
    }
    for (int i = 0; i < kCgroups; ++i) {
      const fs::path dir = base / fmt::format("unit-{:04d}.service", i);
      fs::create_directory(dir);
      std::ofstream(dir / "io.stat") << lines;
    }
  }
  ~FixtureTree() { fs::remove_all(root_); }
  const fs::path& root() const { return root_; }

 private:
  fs::path root_;
};

void BM_ScanCgroupIoFixture(benchmark::State& state) {
  static FixtureTree tree;
  const CgroupLayout layout{CgroupVersion::kV2, "fs/cgroup", std::nullopt};
  const CgroupSelection selection{1, {}, 1'000'000, {}};
  size_t pairs = 0;
  for (auto _ : state) {
    const CgroupIoScan scan = ScanCgroupIo(FileTree(tree.root()), layout, selection);
    pairs = 0;
    for (const auto& c : scan.cgroups) pairs += c.devices.size();
    benchmark::DoNotOptimize(scan);
  }
  state.counters["pairs"] = static_cast<double>(pairs);
  state.SetItemsProcessed(state.iterations() * kCgroups);
}
BENCHMARK(BM_ScanCgroupIoFixture)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
