// The fleet in simulation: a synthetic fleet's probe
// series, each disk judged by the daemon's own judge, written in
// VictoriaMetrics' JSON line import format for the fleet rules
// (deploy/prometheus/fleet.rules.yml) and IowatchProbeRegression (alerts.yml)
// to be evaluated over; and the ground truth of the injected faults. run.py
// beside it drives VictoriaMetrics and vmalert and scores the alerts. Not a
// check, a program run by hand (docs/benchmarks.md, "The fleet in
// simulation"); run.py --short is the ctest.
//
//   fleet_simulation --recording=IOWATCH_DB [--hosts=1000] [--days=30] [--seed=28]
//       [--end=UNIX_SECONDS] [--gradual=20] [--abrupt=5] [--gradual-loss=0.02,0.05]
//       [--abrupt-loss=0.40,0.60]
//       [--load=afternoon|night] [--steal=diurnal|bursts|none]
//       [--passive-window=MINUTES] [--threads=2] [--out=FILE|-] [--truth=FILE]
//
// --load: others' load peaks in the afternoon (default) or is a batch job
// from 01:00 to 05:00 UTC; --steal: the hypervisor's steal rises with the
// afternoon (default), comes in bursts of minutes to an hour at random times
// (each host its own, from the seed), or is none (diurnal_disk.h). Another
// seed or shape is another fleet the judge was not tuned on. --passive-window:
// the passive judge's window on each disk's own reads (passive_timeline.h),
// 1 minute as the daemon's; longer to make it cheaper, 0 for none.
//
// IOWATCH_DB: a copy of a recording's store (it is migrated when opened), e.g.
// tests/bench/verdicts/recordings/quiet/iowatch.db.xz unpacked.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/bench/fleet/disk_timeline.h"
#include "tests/bench/fleet/fleet_layout.h"
#include "tests/bench/fleet/fleet_truth.h"
#include "tests/bench/fleet/import_lines.h"
#include "tests/bench/fleet/recorded_spread.h"

namespace {

using namespace iowatch::fleet;

using iowatch::probes::test_data::kLoadShapes;
using iowatch::probes::test_data::kStealShapes;

struct Options {
  FleetSpec fleet;
  std::string recording;
  std::string out = "-";
  std::string truth;
  int threads = 2;
};

bool Parse(std::string_view arg, std::string_view name, std::string& value) {
  if (!arg.starts_with(name) || arg.size() <= name.size() || arg[name.size()] != '=') return false;
  value = std::string(arg.substr(name.size() + 1));
  return true;
}

std::optional<Options> ParseArgs(int argc, char** argv) {
  Options o;
  int64_t end_s = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  end_s = end_s / 3600 * 3600;  // a round hour, at most an hour ago
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    std::string v;
    if (Parse(arg, "--hosts", v)) {
      o.fleet.hosts = std::atoi(v.c_str());
    } else if (Parse(arg, "--days", v)) {
      o.fleet.days = std::atoi(v.c_str());
    } else if (Parse(arg, "--seed", v)) {
      o.fleet.seed = std::strtoull(v.c_str(), nullptr, 10);
    } else if (Parse(arg, "--end", v)) {
      end_s = std::atoll(v.c_str());
    } else if (Parse(arg, "--gradual", v)) {
      o.fleet.gradual = std::atoi(v.c_str());
    } else if (Parse(arg, "--abrupt", v)) {
      o.fleet.abrupt = std::atoi(v.c_str());
    } else if (Parse(arg, "--gradual-loss", v)) {
      if (std::sscanf(v.c_str(), "%lf,%lf", &o.fleet.gradual_min, &o.fleet.gradual_max) != 2) {
        return std::nullopt;
      }
    } else if (Parse(arg, "--abrupt-loss", v)) {
      if (std::sscanf(v.c_str(), "%lf,%lf", &o.fleet.abrupt_min, &o.fleet.abrupt_max) != 2) {
        return std::nullopt;
      }
    } else if (Parse(arg, "--load", v)) {
      const auto load = iowatch::ValueIn<iowatch::probes::test_data::LoadShape>(kLoadShapes, v);
      if (!load) return std::nullopt;
      o.fleet.load = *load;
    } else if (Parse(arg, "--steal", v)) {
      const auto steal = iowatch::ValueIn<iowatch::probes::test_data::StealShape>(kStealShapes, v);
      if (!steal) return std::nullopt;
      o.fleet.steal = *steal;
    } else if (Parse(arg, "--passive-window", v)) {
      o.fleet.passive_window_ms = std::atoll(v.c_str()) * kMinuteMs;
    } else if (Parse(arg, "--threads", v)) {
      o.threads = std::max(1, std::atoi(v.c_str()));
    } else if (Parse(arg, "--recording", v)) {
      o.recording = v;
    } else if (Parse(arg, "--out", v)) {
      o.out = v;
    } else if (Parse(arg, "--truth", v)) {
      o.truth = v;
    } else {
      return std::nullopt;
    }
  }
  o.fleet.end_ms = end_s * 1000 / kIntervalMs * kIntervalMs;
  if (o.recording.empty() || o.fleet.hosts < 1 || o.fleet.days < 3 ||
      o.fleet.passive_window_ms < 0) {
    return std::nullopt;
  }
  return o;
}

// Every 10 % of the disks on stderr: the full fleet takes hours on two cores.
void Progress(size_t done, size_t total, std::chrono::steady_clock::time_point began) {
  if (total < 100 || done % (total / 10) != 0) return;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  std::fprintf(stderr, "fleet_simulation: %zu of %zu disks in %.0f s\n", done, total, s);
}

// Simulates every disk on `threads` threads; each disk's lines are written
// whole, in whatever order the disks finish.
FleetResult Simulate(const Fleet& fleet, const RecordedSpread& noise, int threads, FILE* out) {
  FleetResult result;
  result.disks.resize(fleet.disks.size());
  std::atomic<size_t> next{0};
  std::mutex mutex;
  size_t done = 0;
  const auto began = std::chrono::steady_clock::now();
  const auto work = [&] {
    std::string lines;
    for (size_t i = next++; i < fleet.disks.size(); i = next++) {
      const DiskTimeline t = SimulateDisk(fleet, fleet.disks[i], noise);
      lines.clear();
      const LineCounts c = AppendDiskSeries(fleet, fleet.disks[i], t, lines);
      std::lock_guard lock(mutex);
      std::fwrite(lines.data(), 1, lines.size(), out);
      result.disks[i] = t.counts;
      result.lines.series += c.series;
      result.lines.samples += c.samples;
      Progress(++done, fleet.disks.size(), began);
    }
  };
  std::vector<std::jthread> pool;
  for (int n = 0; n < threads; ++n) pool.emplace_back(work);
  pool.clear();
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Options> options = ParseArgs(argc, argv);
  if (!options) {
    using iowatch::NamesIn;
    std::fprintf(stderr,
                 "usage: fleet_simulation --recording=IOWATCH_DB [--hosts=N] [--days=N] [--seed=N] "
                 "[--end=UNIX_SECONDS] [--gradual=N] [--abrupt=N] [--gradual-loss=MIN,MAX] "
                 "[--abrupt-loss=MIN,MAX] "
                 "[--load=%s] [--steal=%s] [--passive-window=MINUTES] [--threads=N] "
                 "[--out=FILE|-] [--truth=FILE]\n"
                 "  --load: others' load, an afternoon peak (default) or a night batch "
                 "01:00-05:00 UTC\n"
                 "  --steal: the hypervisor's steal, with the afternoon (default), in random "
                 "bursts of minutes to an hour, or none\n"
                 "  --passive-window: the passive judge's window on each disk's reads, 1 "
                 "(default, the daemon's) or longer; 0: no passive series\n",
                 NamesIn<iowatch::probes::test_data::LoadShape>(kLoadShapes, "|").c_str(),
                 NamesIn<iowatch::probes::test_data::StealShape>(kStealShapes, "|").c_str());
    return 2;
  }
  iowatch::Result<RecordedSpread> noise =
      RecordedSpread::Load(options->recording, "randread-4k-qd1");
  if (!noise) {
    std::fprintf(stderr, "%s: %s\n", options->recording.c_str(), noise.error().message.c_str());
    return 1;
  }
  const Fleet fleet = MakeFleet(options->fleet);
  FILE* out = options->out == "-" ? stdout : std::fopen(options->out.c_str(), "w");
  if (out == nullptr) {
    std::perror(options->out.c_str());
    return 1;
  }
  const auto began = std::chrono::steady_clock::now();
  const FleetResult result = Simulate(fleet, *noise, options->threads, out);
  if (out != stdout && std::fclose(out) != 0) return 1;
  std::fflush(stdout);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  PrintSummary(fleet, *noise, result, seconds, stderr);
  if (!options->truth.empty() && !WriteTruth(fleet, *noise, result, options->truth)) {
    std::perror(options->truth.c_str());
    return 1;
  }
  return 0;
}
