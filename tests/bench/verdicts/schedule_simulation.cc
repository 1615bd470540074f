// The bundled schedule (every 15 min ± 1 min, the default baseline policy:
// 10 runs over at least an hour, K = 3) on a disk with a diurnal load and
// steal (diurnal_disk.h), through the daemon's judge (JudgeRun): how long a
// new host's disk waits for its first verdict, and how long a 30 % slowdown
// takes to be raised, for each hour of the day it starts at; and the false
// alarms of the healthy days. The goals: a first verdict within a day, a
// slowdown raised within the hour. Then a trial on a busy disk (BusyHost): how many judged
// runs a uniform 30 % slowdown takes to be raised, which a disk this kernel
// cannot slow uniformly (no device-mapper delay target, no null_blk) shows
// only here. Not a check, a program run by hand (docs/benchmarks.md,
// "Regression verdicts: false alarms and detections"):
//
//   schedule_simulation [hosts per start hour]    (default 10)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "probes/verdicts/job_judge.h"
#include "probes/verdicts/memory_baseline_source.h"
#include "tests/bench/verdicts/diurnal_disk.h"

namespace {

using namespace iowatch::probes;
using namespace iowatch::probes::test_data;

constexpr int64_t kMinute = 60'000;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kEpoch = 1'700'006'400'000;  // a midnight (UTC)

// The runs of one or more hosts: how many were judged, and the false
// alarms among the healthy ones.
struct RunCounts {
  size_t runs = 0, judged = 0, judged_healthy = 0, false_raises = 0;

  RunCounts& operator+=(const RunCounts& o) {
    runs += o.runs;
    judged += o.judged;
    judged_healthy += o.judged_healthy;
    false_raises += o.false_raises;
    return *this;
  }
  double JudgedPercent() const {
    return runs == 0 ? 0 : 100.0 * static_cast<double>(judged) / static_cast<double>(runs);
  }
  double FalseAlarmsPer1000() const {
    return judged_healthy == 0
               ? 0
               : 1000.0 * static_cast<double>(false_raises) / static_cast<double>(judged_healthy);
  }
};

struct Trial {
  int64_t first_judged_ms = -1;  // from the first run
  int64_t raised_ms = -1;        // from the slowdown's start
  RunCounts counts;
};

// One host: its first run at `first_ms`, healthy for `healthy_days`, then
// 30 % slower from `slow_ms` for a day.
Trial RunHost(uint64_t seed, int64_t first_ms, int64_t slow_ms, double slowdown) {
  DiurnalDisk disk(seed);
  std::mt19937_64 jitter(seed ^ 0x5eed);
  std::uniform_int_distribution<int64_t> within(-kMinute, kMinute);
  MemoryBaselineSource source;
  SeriesState state;
  state.tracker = RegressionTracker::For(BaselinePolicy{});
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
    ++t.counts.runs;
    if (j->judged) {
      ++t.counts.judged;
      if (!slow) ++t.counts.judged_healthy;
      if (t.first_judged_ms < 0) t.first_judged_ms = start - first_ms;
    }
    for (const RegressionChange& c : j->changes) {
      if (!c.regressed) continue;
      if (!slow) ++t.counts.false_raises;
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
    RunCounts counts;
    size_t missed = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
      // A new host whose first run is at `hour`; the slowdown three days
      // later at the same hour.
      const int64_t first_ms = kEpoch + hour * kHour;
      const Trial t = RunHost(static_cast<uint64_t>(seed) * 7919 + hour, first_ms,
                              first_ms + 3 * kDay, slowdown);
      first.push_back(t.first_judged_ms < 0 ? 99 * kDay : t.first_judged_ms);
      if (t.raised_ms < 0) ++missed;
      raised.push_back(t.raised_ms < 0 ? 99 * kDay : t.raised_ms);
      counts += t.counts;
    }
    std::ranges::sort(first);
    std::ranges::sort(raised);
    const auto median = [](const std::vector<int64_t>& v) { return v[v.size() / 2]; };
    std::printf("| %02d:00 | %s (%s) | %s (%s)%s | %.0f %% | %.1f |\n", hour,
                Hours(median(first)).c_str(), Hours(first.back()).c_str(),
                Hours(median(raised)).c_str(), Hours(raised.back()).c_str(),
                missed > 0 ? (", " + std::to_string(missed) + " missed").c_str() : "",
                counts.JudgedPercent(), counts.FalseAlarmsPer1000());
  }
}

// A trial on a busy disk, simulated: a probe every 15 s (± 2 s), baselines learned
// inside the run (runs: 10, min_age: 90 s), others' load drawn anew every
// 15-45 s from none to 5,000 requests/s and 0, 1 or 2 CPU burners anew every
// 20-60 s (steal about 1 %, 15 % or 30 %), as record.py's busy scenario;
// healthy for an hour, `slowdown` times slower for 10 minutes, healthy again
// for 15. Counted: the judged runs from the slowdown's start to its raise and
// from its end to the clear, and the raises of the healthy spans.
struct BusyTrial {
  int raise_runs = -1, clear_runs = -1;
  RunCounts counts;
};

BusyTrial BusyHost(uint64_t seed, double slowdown) {
  DiurnalDisk disk(seed);
  std::mt19937_64 rng(seed ^ 0xb05e);
  std::uniform_real_distribution<double> unit(0, 1);
  BaselinePolicy policy;
  policy.min_age_ms = 90'000;
  MemoryBaselineSource source;
  SeriesState state;
  state.tracker = RegressionTracker::For(policy);
  constexpr int64_t kSlowFrom = 60 * kMinute, kSlowTo = 70 * kMinute, kEnd = 85 * kMinute;
  double load = 0, steal = 0.01;
  int64_t load_until = 0, steal_until = 0;
  BusyTrial t;
  int judged_slow = 0, judged_after = 0;
  bool raised = false;
  int64_t id = 0;
  for (int64_t at = 0; at < kEnd; at += 15'000) {
    const int64_t start = at + static_cast<int64_t>(4000 * unit(rng)) - 2000;
    if (start >= load_until) {
      load = unit(rng) < 0.15 ? 0 : 5000 * unit(rng);
      load_until = start + static_cast<int64_t>(15'000 + 30'000 * unit(rng));
    }
    if (start >= steal_until) {
      const int burners = static_cast<int>(3 * unit(rng));
      steal = (burners == 0 ? 0.01 : 0.15 * burners) * (0.67 + 0.67 * unit(rng));
      steal_until = start + static_cast<int64_t>(20'000 + 40'000 * unit(rng));
    }
    const bool slow = start >= kSlowFrom && start < kSlowTo;
    const RunRecord run = disk.RunAt(++id, kEpoch + start, load, steal, slow ? slowdown : 1);
    source.Add(run);
    iowatch::Result<RunJudgement> j = JudgeRun(run, source, state, {}, policy, run.start_unix_ms);
    if (!j) std::abort();
    ++t.counts.runs;
    if (j->judged) {
      ++t.counts.judged;
      if (slow) ++judged_slow;
      if (start >= kSlowTo) ++judged_after;
      if (!slow && !raised) ++t.counts.judged_healthy;
    }
    for (const RegressionChange& c : j->changes) {
      if (c.regressed && !raised) {
        raised = true;
        if (slow && t.raise_runs < 0) t.raise_runs = judged_slow;
        if (!slow) ++t.counts.false_raises;
      } else if (!c.regressed && raised && !state.tracker.AnyRegressed()) {
        raised = false;
        if (start >= kSlowTo && t.clear_runs < 0) t.clear_runs = judged_after;
      }
    }
  }
  return t;
}

void BusyTable(int hosts, double slowdown) {
  std::vector<int> raise, clear;
  RunCounts counts;
  size_t missed = 0, within = 0;
  const BaselinePolicy policy;
  for (int seed = 1; seed <= hosts; ++seed) {
    const BusyTrial t = BusyHost(static_cast<uint64_t>(seed) * 104729, slowdown);
    if (t.raise_runs < 0) ++missed;
    if (t.raise_runs >= 0 && t.raise_runs <= static_cast<int>(policy.hysteresis) + 2) ++within;
    raise.push_back(t.raise_runs < 0 ? 999 : t.raise_runs);
    clear.push_back(t.clear_runs < 0 ? 999 : t.clear_runs);
    counts += t.counts;
  }
  std::ranges::sort(raise);
  std::ranges::sort(clear);
  std::printf(
      "| IOPS %.0f %% lower (latency × %.2f) | %.0f %% | %.1f of %zu | %d (%d) | %zu of %d | %d "
      "(%d) |\n",
      100 * (1 - 1 / slowdown), slowdown, counts.JudgedPercent(), counts.FalseAlarmsPer1000(),
      counts.judged_healthy, raise[raise.size() / 2], raise.back(), within, hosts,
      clear[clear.size() / 2], clear.back());
  const auto never = std::ranges::count(clear, 999);
  if (missed > 0 || never > 0) {
    std::printf("(%zu missed; %td not cleared within the 15 minutes after)\n", missed, never);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 10;
  Table(seeds, 1.3);
  Table(seeds, 1.5);
  const int hosts = 20 * seeds;
  std::printf(
      "\nA trial on a busy disk (every 15 s, min_age 90 s), %d hosts:\n\n"
      "| slowdown | judged | false alarms per 1,000 healthy judged (of) | raised after judged "
      "runs: median (max) | within hysteresis + 2 | cleared after: median (max) |\n"
      "|---|---|---|---|---|---|\n",
      hosts);
  BusyTable(hosts, 1 / 0.7);
  BusyTable(hosts, 2);
  return 0;
}
