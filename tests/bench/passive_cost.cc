// The passive judge's CPU per disk per sample: 1,000 synthetic disks sampled
// every second for some simulated hours through PassiveService::OnSample,
// the daemon's own path on its sampling thread (the feed's O(1) bookkeeping
// each sample; each minute, the windows cut and judged, and the models
// fitted after the first hour and refitted every hour after). Each disk
// reads and writes at its own rate, which wanders from minute to minute,
// with a latency that rises with it, as the BPF device stage gives them
// (collectors.bpf.enabled, the judge's preferred source): two series per
// disk. Only OnSample is timed (the thread's CPU clock); making the
// snapshots is the sampler's work, not the judge's.
//
// Compared in the same run with a reference: parsing /proc/diskstats for
// the same number of disks and deriving their iostat columns, the work
// every sample already does per disk (diskstats_bench.cc), so that the
// ratio says what the judge adds whatever the machine.
//
//   passive_cost [--disks=1000] [--hours=4] [--check]
//
// --check (bench.passive_cost_short): exit 1 unless the mean and the worst
// minute are within the budget (50 µs per disk per sample) and the mean is
// within kMaxRatio of the reference.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/disk/diskstats.h"
#include "collectors/disk/iostat.h"
#include "daemon/passive/passive_service.h"
#include "tests/bench/synthetic_diskstats.h"

namespace {

using iowatch::collectors::bpf::BlockOp;
using iowatch::collectors::bpf::BlockStage;
using iowatch::daemon::BlockLatencySeries;
using iowatch::daemon::BlockRequestSeries;
using iowatch::daemon::DeviceSnapshot;
using iowatch::daemon::PassiveService;
using iowatch::daemon::Snapshot;

constexpr double kBudgetMicros = 50;  // the issue's: CPU per disk per sample
// The mean's most over the reference's (the diskstats work per disk per
// sample): measured 0.5-1.2 over 2 h and 1.4 over 50 h (the models' rings
// full) on the development VM, beside other builds (docs/benchmarks.md);
// checked with a margin wide enough for a loaded CI machine, not for a
// judge grown tenfold.
constexpr double kMaxRatio = 5;
constexpr int64_t kStartMs = int64_t{1'796'400'000} * 1000;  // a round hour

struct Options {
  int disks = 1000;
  int hours = 4;
  bool check = false;
};

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// One synthetic disk: its mean rates (reads, writes per second) and
// latencies; each minute, a load level drawn around them.
struct Disk {
  double read_rate = 0;
  double write_rate = 0;
  double read_latency_s = 0;
  double write_latency_s = 0;
  double level = 1;  // this minute's load against the mean (lognormal, σ 0.3)
};

// The sample's counters grown by one second of each disk's I/O.
class Fleet {
 public:
  Fleet(int disks, uint64_t seed) : rng_(seed) {
    std::uniform_real_distribution<double> rate(50, 500);
    std::uniform_real_distribution<double> latency(80e-6, 400e-6);
    auto devices = std::make_shared<std::vector<iowatch::collectors::BlockDevice>>();
    for (int i = 0; i < disks; ++i) {
      Disk d;
      d.read_rate = rate(rng_);
      d.write_rate = 0.4 * rate(rng_);
      d.read_latency_s = latency(rng_);
      d.write_latency_s = 0.3 * latency(rng_);
      disks_.push_back(d);
      const std::string name = fmt::format("nvme{}n1", i);
      DeviceSnapshot dev;
      dev.name = name;
      dev.counters.field_count = 17;
      snapshot_.devices.push_back(dev);
      for (const BlockOp op : {BlockOp::kRead, BlockOp::kWrite}) {
        for (const BlockStage stage : {BlockStage::kDevice, BlockStage::kTotal}) {
          BlockLatencySeries s;
          s.device = name;
          s.op = op;
          s.stage = stage;
          snapshot_.block_io.latency.push_back(s);
        }
        BlockRequestSeries r;
        r.device = name;
        r.op = op;
        snapshot_.block_io.requests.push_back(r);
      }
      iowatch::collectors::BlockDevice b;
      b.name = name;
      b.diskseq = static_cast<uint64_t>(i) + 1;
      b.serial = fmt::format("S{:06d}", i);
      devices->push_back(b);
    }
    snapshot_.block_devices = devices;
    snapshot_.stat.emplace();
  }

  // The snapshot of second `t` (the previous one's counters grown).
  const Snapshot& At(int64_t t) {
    snapshot_.timestamp_seconds = static_cast<double>(kStartMs) / 1000 + static_cast<double>(t);
    snapshot_.monotonic_seconds = 100 + static_cast<double>(t);
    if (t % 60 == 0) {
      for (Disk& d : disks_) d.level = std::exp(0.3 * normal_(rng_));
      steal_ = std::uniform_int_distribution<uint64_t>(1, 5)(rng_);  // 0.5-2.5 % of 2 CPUs
    }
    iowatch::collectors::CpuTicks& cpu = snapshot_.stat->total;
    cpu.user += 60;
    cpu.system += 20;
    cpu.idle += 120 - steal_;
    cpu.steal += steal_;
    for (size_t i = 0; i < disks_.size(); ++i) Grow(i);
    return snapshot_;
  }

 private:
  void Grow(size_t i) {
    const Disk& d = disks_[i];
    iowatch::collectors::DiskCounters& c = snapshot_.devices[i].counters;
    const double noise = std::exp(0.05 * normal_(rng_));
    const auto reads = static_cast<uint64_t>(d.read_rate * d.level * noise);
    const auto writes = static_cast<uint64_t>(d.write_rate * d.level * noise);
    const double read_s = d.read_latency_s * (1 + d.read_rate * d.level / 4000) * noise;
    const double write_s = d.write_latency_s * (1 + d.write_rate * d.level / 4000) * noise;
    c.reads += reads;
    c.read_sectors += reads * 16;
    c.read_ms += static_cast<uint64_t>(static_cast<double>(reads) * read_s * 1000);
    c.writes += writes;
    c.write_sectors += writes * 32;
    c.write_ms += static_cast<uint64_t>(static_cast<double>(writes) * write_s * 1000);
    c.io_ms += 400;
    c.weighted_io_ms += 500;
    BlockLatencySeries* lat = &snapshot_.block_io.latency[4 * i];
    for (int op = 0; op < 2; ++op) {
      const uint64_t n = op == 0 ? reads : writes;
      const double s = op == 0 ? read_s : write_s;
      for (int stage = 0; stage < 2; ++stage, ++lat) {
        lat->count += n;
        lat->sum_ns += static_cast<uint64_t>(static_cast<double>(n) * s * 1e9 * (1 + 0.1 * stage));
      }
      snapshot_.block_io.requests[2 * i + static_cast<size_t>(op)].stats.bytes +=
          n * (op == 0 ? 8192 : 16384);
    }
  }

  std::mt19937_64 rng_;
  std::normal_distribution<double> normal_;
  std::vector<Disk> disks_;
  uint64_t steal_ = 3;  // ticks a second, of 200
  Snapshot snapshot_;
};

struct Cost {
  double mean_us = 0;          // CPU per disk per sample over the whole run
  double worst_minute_us = 0;  // the same over the costliest minute
  int64_t worst_minute = 0;    // its index from the start
  double worst_sample_ms = 0;  // the costliest single sample (a window's close)
  size_t judged = 0;           // series whose last window was judged, at the end
  size_t series = 0;
};

Cost MeasurePassive(const Options& o) {
  Fleet fleet(o.disks, 28);
  PassiveService service(iowatch::daemon::PassiveOptions{});
  const int64_t samples = int64_t{o.hours} * 3600;
  std::vector<double> minute(static_cast<size_t>(o.hours) * 60 + 1, 0);
  Cost cost;
  double total = 0;
  for (int64_t t = 0; t <= samples; ++t) {
    const Snapshot& s = fleet.At(t);
    const double before = ThreadCpuSeconds();
    service.OnSample(s, {});
    const double spent = ThreadCpuSeconds() - before;
    total += spent;
    // The sample that closes minute m's window is the first of minute m + 1.
    minute[static_cast<size_t>(std::max<int64_t>(0, t - 1) / 60)] += spent;
    cost.worst_sample_ms = std::max(cost.worst_sample_ms, spent * 1e3);
  }
  const double disks = o.disks;
  cost.mean_us = total * 1e6 / static_cast<double>(samples + 1) / disks;
  for (size_t m = 0; m + 1 < minute.size(); ++m) {
    const double us = minute[m] * 1e6 / 60 / disks;
    if (us > cost.worst_minute_us) {
      cost.worst_minute_us = us;
      cost.worst_minute = static_cast<int64_t>(m);
    }
  }
  for (const auto& row : service.Latest()->series) {
    ++cost.series;
    cost.judged += row.last.reason == iowatch::probes::PassiveReason::kJudged;
  }
  return cost;
}

// The reference: a sample's diskstats work for `disks` disks (parse the
// file, derive every iostat column), µs of CPU per disk, the best of a few
// rounds of 100 samples.
double MeasureDiskstats(int disks) {
  using iowatch::bench::SyntheticDiskstats;
  const auto prev = iowatch::collectors::ParseDiskstats(SyntheticDiskstats(disks, 1000003), "d");
  const std::string text = SyntheticDiskstats(disks, 1000103);
  double best = 1e9;
  for (int round = 0; round < 5; ++round) {
    const double before = ThreadCpuSeconds();
    double sum = 0;
    constexpr int kSamples = 100;
    for (int i = 0; i < kSamples; ++i) {
      const auto cur = iowatch::collectors::ParseDiskstats(text, "diskstats");
      for (size_t d = 0; d < cur.disks.size(); ++d) {
        sum +=
            iowatch::collectors::ComputeIostat(prev.disks[d].counters, cur.disks[d].counters, 100)
                .util_pct;
      }
    }
    if (sum < 0) std::abort();  // keeps the work
    best = std::min(best, (ThreadCpuSeconds() - before) * 1e6 / kSamples / disks);
  }
  return best;
}

bool Parse(std::string_view arg, std::string_view name, int& value) {
  if (!arg.starts_with(name) || arg.size() <= name.size() || arg[name.size()] != '=') return false;
  value = std::atoi(std::string(arg.substr(name.size() + 1)).c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--check") {
      o.check = true;
    } else if (!Parse(arg, "--disks", o.disks) && !Parse(arg, "--hours", o.hours)) {
      std::fprintf(stderr, "usage: passive_cost [--disks=1000] [--hours=4] [--check]\n");
      return 2;
    }
  }
  if (o.disks < 1 || o.hours < 2) {
    std::fprintf(stderr, "passive_cost: --disks ≥ 1, --hours ≥ 2 (the first is learning)\n");
    return 2;
  }
  const double reference = MeasureDiskstats(o.disks);
  const Cost c = MeasurePassive(o);
  const double ratio = c.mean_us / reference;
  std::printf(
      "passive_cost: %d disks × %d h of 1 s samples through PassiveService::OnSample "
      "(%zu series, %zu judged at the end)\n"
      "  mean %.3f µs CPU per disk per sample; worst minute %.3f µs (minute %lld); "
      "worst sample %.1f ms\n"
      "  reference, diskstats parsed and derived for the same disks: %.3f µs per disk per "
      "sample; ratio %.2f\n",
      o.disks, o.hours, c.series, c.judged, c.mean_us, c.worst_minute_us,
      static_cast<long long>(c.worst_minute), c.worst_sample_ms, reference, ratio);
  if (!o.check) return 0;
  int failed = 0;
  if (c.mean_us > kBudgetMicros || c.worst_minute_us > kBudgetMicros) {
    std::printf(
        "FAIL: mean %.3f or worst minute %.3f µs per disk per sample over the budget %.0f\n",
        c.mean_us, c.worst_minute_us, kBudgetMicros);
    ++failed;
  }
  if (ratio > kMaxRatio) {
    std::printf("FAIL: mean %.2f × the diskstats reference, expected at most %.1f ×\n", ratio,
                kMaxRatio);
    ++failed;
  }
  if (c.judged < c.series / 2) {
    std::printf("FAIL: %zu of %zu series judged at the end: the run measured no judging\n",
                c.judged, c.series);
    ++failed;
  }
  return failed == 0 ? 0 : 1;
}
