// The bundled schedule (every 15 min ± 1 min, the default baseline policy:
// 10 runs over at least an hour, K = 3) on a disk with a diurnal load and
// steal (diurnal_disk.h), through the daemon's judge (JudgeRun): how long a
// new host's disk waits for its first verdict, and how long a 30 % slowdown
// takes to be raised, for each hour of the day it starts at; and the false
// alarms of the healthy days. Issue 27 asks for under a day and under an
// hour. Not a check, a program run by hand (README, "Regression verdicts"):
//
//   schedule_simulation [hosts per start hour]    (default 10)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "probes/baseline/job_judge.h"
#include "probes/baseline/memory_baseline_source.h"
#include "tests/bench/verdicts/diurnal_disk.h"

namespace {

using namespace iowatch::probes;
using namespace iowatch::probes::test_data;

constexpr int64_t kMinute = 60'000;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kEpoch = 1'700'006'400'000;  // a midnight (UTC)

struct Trial {
  int64_t first_judged_ms = -1;  // from the first run
  int64_t raised_ms = -1;        // from the slowdown's start
  size_t judged = 0, runs = 0, false_raises = 0, judged_healthy = 0;
};

// One host: its first run at `first_ms`, healthy for `healthy_days`, then
// 30 % slower from `slow_ms` for a day.
Trial RunHost(uint64_t seed, int64_t first_ms, int64_t slow_ms, double slowdown) {
  DiurnalDisk disk(seed);
  std::mt19937_64 jitter(seed ^ 0x5eed);
  std::uniform_int_distribution<int64_t> within(-kMinute, kMinute);
  MemoryBaselineSource source;
  SeriesState state;
  state.tracker = RegressionTracker(BaselinePolicy{}.hysteresis);
  const BaselinePolicy policy;
  Trial t;
  int64_t id = 0;
  for (int64_t at = first_ms; at < slow_ms + kDay; at += 15 * kMinute) {
    const int64_t start = at + within(jitter);
    const bool slow = start >= slow_ms;
    const RunRecord run = disk.Run(++id, start, slow ? slowdown : 1);
    source.Add(run);
    iowatch::Result<RunJudgement> j = JudgeRun(run, source, state, {}, policy, start);
    if (!j) std::abort();
    ++t.runs;
    if (j->judged) {
      ++t.judged;
      if (!slow) ++t.judged_healthy;
      if (t.first_judged_ms < 0) t.first_judged_ms = start - first_ms;
    }
    for (const RegressionChange& c : j->changes) {
      if (!c.regressed) continue;
      if (!slow) ++t.false_raises;
      if (slow && t.raised_ms < 0) t.raised_ms = start + 2000 - slow_ms;
    }
    if (slow && t.raised_ms >= 0) break;
  }
  return t;
}

std::string Hours(int64_t ms) {
  if (ms < 0 || ms >= 99 * kDay) return "never";
  char out[32];
  std::snprintf(out, sizeof out, "%lldh%02lld", static_cast<long long>(ms / kHour),
                static_cast<long long>(ms % kHour / kMinute));
  return out;
}

void Table(int seeds, double slowdown) {
  std::printf("\n%.0f %% slower (latency × %.1f), %d hosts per start hour:\n\n",
              100 * (slowdown - 1), slowdown, seeds);
  std::printf(
      "| starts at | first verdict: median (max) | slowdown raised: median (max) "
      "| judged | false alarms per 1,000 healthy judged |\n|---|---|---|---|---|\n");
  for (int hour = 0; hour < 24; hour += 3) {
    std::vector<int64_t> first, raised;
    size_t judged = 0, runs = 0, false_raises = 0, healthy = 0, missed = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
      // A new host whose first run is at `hour`; the slowdown three days
      // later at the same hour.
      const int64_t first_ms = kEpoch + hour * kHour;
      const Trial t = RunHost(static_cast<uint64_t>(seed) * 7919 + hour, first_ms,
                              first_ms + 3 * kDay, slowdown);
      first.push_back(t.first_judged_ms < 0 ? 99 * kDay : t.first_judged_ms);
      if (t.raised_ms < 0) ++missed;
      raised.push_back(t.raised_ms < 0 ? 99 * kDay : t.raised_ms);
      judged += t.judged;
      runs += t.runs;
      false_raises += t.false_raises;
      healthy += t.judged_healthy;
    }
    std::ranges::sort(first);
    std::ranges::sort(raised);
    const auto median = [](const std::vector<int64_t>& v) { return v[v.size() / 2]; };
    std::printf(
        "| %02d:00 | %s (%s) | %s (%s)%s | %.0f %% | %.1f |\n", hour, Hours(median(first)).c_str(),
        Hours(first.back()).c_str(), Hours(median(raised)).c_str(), Hours(raised.back()).c_str(),
        missed > 0 ? (", " + std::to_string(missed) + " missed").c_str() : "",
        100.0 * static_cast<double>(judged) / static_cast<double>(runs),
        healthy == 0 ? 0.0
                     : 1000.0 * static_cast<double>(false_raises) / static_cast<double>(healthy));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 10;
  Table(seeds, 1.3);
  Table(seeds, 1.5);
  return 0;
}
