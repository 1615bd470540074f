#include "tests/bench/fleet/disk_timeline.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "probes/verdicts/job_judge.h"
#include "probes/verdicts/memory_baseline_source.h"
#include "probes/verdicts/run_stress.h"
#include "tests/bench/fleet/full_resolution_run.h"

namespace iowatch::fleet {
namespace {

using probes::MetricVerdict;
using probes::RunJudgement;
using probes::RunRecord;

int MetricIndex(std::string_view metric) {
  const auto it = std::ranges::find(kJudgedMetrics, metric);
  return it == kJudgedMetrics.end() ? -1 : static_cast<int>(it - kJudgedMetrics.begin());
}

double MetricOf(const RunRecord& run, std::string_view metric) {
  for (const probes::MetricSample& m : run.metrics) {
    if (m.op == "read" && m.metric == metric) return m.value;
  }
  return 0;
}

// What the daemon publishes for the probe between runs.
class Published {
 public:
  void Restart() { *this = Published(); }

  // As ProbeRecorder::Record: a judged run replaces the verdicts, an unjudged
  // one leaves the last judged run's, their regression states re-read from
  // the hysteresis; a series with no baseline publishes none.
  void Note(const RunRecord& run, const RunJudgement& j, const probes::SeriesState& state) {
    now_.up = true;
    now_.iops = static_cast<float>(MetricOf(run, "iops"));
    now_.lat_mean_seconds = static_cast<float>(MetricOf(run, "lat_mean_seconds"));
    now_.contended = j.classification.run_class == probes::RunClass::kContended;
    if (j.classification.run_class == probes::RunClass::kClean) {  // as KeepIfUncontended
      now_.uncontended_iops = now_.iops;
      now_.uncontended_lat_mean_seconds = now_.lat_mean_seconds;
      now_.uncontended_start_ms = run.start_unix_ms;
    }
    if (j.judged) last_ = j.verdicts;
    if (j.baselines == 0) last_.clear();
    now_.verdicts = now_.regressed = 0;
    for (const MetricVerdict& v : last_) {
      const int i = MetricIndex(v.metric);
      if (i < 0) continue;
      now_.verdicts |= uint8_t(1u << i);
      now_.ratio[static_cast<size_t>(i)] = static_cast<float>(v.ratio);
      if (state.Regressed(v.op, v.metric)) now_.regressed |= uint8_t(1u << i);
    }
  }
  const Scrape& Now() const { return now_; }

 private:
  Scrape now_;
  std::vector<MetricVerdict> last_;
};

// The disk's runs: the bundled schedule from a random phase, none while its
// host is down for a firmware update.
std::vector<int64_t> RunStarts(const Fleet& fleet, const DiskSpec& disk, std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> phase(0, kIntervalMs - 1);
  std::uniform_int_distribution<int64_t> jitter(-kMinuteMs, kMinuteMs);
  std::vector<int64_t> starts;
  for (int64_t slot = fleet.start_ms + phase(rng); slot < fleet.spec.end_ms; slot += kIntervalMs) {
    const int64_t at = slot + jitter(rng);
    if (at < fleet.start_ms || DownAt(disk, at)) continue;
    starts.push_back(at);
  }
  return starts;
}

void Count(const DiskSpec& disk, const RunRecord& run, const RunJudgement& j, DiskCounts& c) {
  ++c.runs;
  c.judged += j.judged;
  c.contended += j.classification.run_class == probes::RunClass::kContended;
  for (const probes::RegressionChange& change : j.changes) {
    if (!change.regressed) continue;
    const bool after_fault =
        disk.fault.kind != FaultKind::kNone && run.start_unix_ms >= disk.fault.start_ms;
    c.healthy_raises += !after_fault;
    if (after_fault && c.first_raise_ms < 0) c.first_raise_ms = run.start_unix_ms + run.duration_ms;
  }
}

// The O(1) run against the one DiurnalDisk makes directly: the same draws.
void CheckFirstRun(const RunRecord& fast, const RunRecord& direct) {
  if (const std::string differs = CheckSameRun(fast, direct); !differs.empty()) {
    std::fprintf(stderr, "full-resolution run differs from DiurnalDisk's: %s\n", differs.c_str());
    std::abort();
  }
}

// IOWATCH_FLEET_TRACE=INSTANCE/PROBE (host0042:9860/randread-4k-qd1-sdb): every
// run of that disk on stderr, with the judge's class, band, verdict and why.
bool Traced(const DiskSpec& disk) {
  const char* want = std::getenv("IOWATCH_FLEET_TRACE");
  return want != nullptr && InstanceOf(disk.host) + "/" + ProbeOf(disk.slot) == want;
}

void Trace(const RunRecord& run, const RunJudgement& j, double slowdown) {
  std::string bad;
  for (const MetricVerdict& v : j.verdicts) {
    if (v.judged && v.bad) bad += " " + v.metric;
  }
  for (const probes::RegressionChange& c : j.changes) {
    bad += (c.regressed ? " RAISED " : " cleared ") + c.metric;
  }
  const time_t at = run.start_unix_ms / 1000;
  char when[32];
  std::strftime(when, sizeof when, "%d %H:%M", std::gmtime(&at));
  std::fprintf(stderr, "%s ×%.2f iops %.0f band %d judged %d ratio %.2f%s | %s | %s\n", when,
               slowdown, MetricOf(run, "iops"), j.classification.band, j.judged ? 1 : 0,
               j.verdicts.empty() ? 0.0 : j.verdicts.front().ratio, bad.c_str(), j.why.c_str(),
               j.against.c_str());
}

// IOWATCH_FLEET_RAISES=1: each regression raised on a healthy disk (or
// before its fault) on stderr, with what judged it: the mechanism behind
// the per-host alert's false alarms.
bool TraceRaises() {
  static const bool on = std::getenv("IOWATCH_FLEET_RAISES") != nullptr;
  return on;
}

void TraceHealthyRaise(const DiskSpec& disk, const RunRecord& run, const RunJudgement& j,
                       const probes::RegressionChange& change) {
  const probes::RunStress stress =
      run.conditions ? probes::StressOf(*run.conditions) : probes::RunStress{};
  const time_t at = run.start_unix_ms / 1000;
  char when[32];
  std::strftime(when, sizeof when, "%d %H:%M", std::gmtime(&at));
  double spread = 0;
  if (j.baseline) {
    for (const probes::MetricBaseline& m : j.baseline->baseline.metrics) {
      if (m.op == change.op && m.metric == change.metric && m.median > 0) {
        spread = m.spread / m.median;
      }
    }
  }
  std::fprintf(stderr,
               "RAISE %s/%s %s %s ratio %.3f threshold %.3f class %d band %d other %d "
               "baseline_runs %lld spread %.3f load %.0f steal %.4f wait %.4f | %s\n",
               InstanceOf(disk.host).c_str(), ProbeOf(disk.slot).c_str(), when,
               change.metric.c_str(), change.verdict.ratio,
               change.verdict.baseline > 0 ? change.verdict.threshold / change.verdict.baseline : 0,
               static_cast<int>(j.classification.run_class), j.classification.band,
               j.other_conditions ? 1 : 0,
               static_cast<long long>(j.baseline ? j.baseline->run_count : -1), spread, stress.load,
               stress.steal, stress.wait, j.against.c_str());
}

}  // namespace

size_t ScrapeCount(const Fleet& fleet) {
  return static_cast<size_t>((fleet.spec.end_ms - fleet.start_ms) / kIntervalMs) + 1;
}

DiskTimeline SimulateDisk(const Fleet& fleet, const DiskSpec& disk, const RecordedSpread& noise) {
  const ModelSpec& model = fleet.models[static_cast<size_t>(disk.model)];
  probes::test_data::DiurnalShape shape = fleet.hosts[static_cast<size_t>(disk.host)];
  shape.base_latency_us = model.latency_us;
  probes::test_data::DiurnalDisk direct(disk.seed, shape);
  shape.base_latency_us *= kScale;  // full_resolution_run.h
  probes::test_data::DiurnalDisk probe(disk.seed, shape);
  std::mt19937_64 rng(disk.seed ^ 0xf1ee7);
  const probes::BaselinePolicy policy;
  probes::MemoryBaselineSource source;  // every run kept: the bundled retention is 90 days
  probes::SeriesState state;
  state.tracker = probes::RegressionTracker::For(policy);
  DiskTimeline out;
  out.scrapes.resize(ScrapeCount(fleet));
  Published published;
  size_t next = 0;  // the next scrape to fill
  const auto scrape_ms = [&](size_t i) {
    return fleet.start_ms + static_cast<int64_t>(i) * kIntervalMs;
  };
  const auto fill_until = [&](int64_t until_ms) {
    for (; next < out.scrapes.size() && scrape_ms(next) < until_ms; ++next) {
      const bool down = DownAt(disk, scrape_ms(next));
      if (down) published.Restart();  // the daemon's published state starts afresh
      out.scrapes[next] = down ? Scrape{} : published.Now();
    }
  };
  const bool trace = Traced(disk);
  int64_t id = 0;
  for (const int64_t start : RunStarts(fleet, disk, rng)) {
    const double slowdown = noise.Draw(rng) / SpeedAt(disk, start);
    const RunRecord run = FullResolution(probe.Run(++id, start, slowdown));
    if (id == 1) CheckFirstRun(run, direct.Run(id, start, slowdown));
    fill_until(run.start_unix_ms + run.duration_ms);
    source.Add(run);
    iowatch::Result<RunJudgement> j = probes::JudgeRun(run, source, state, {}, policy, start);
    if (!j) std::abort();  // the memory source never fails
    published.Note(run, *j, state);
    Count(disk, run, *j, out.counts);
    if (TraceRaises()) {
      for (const probes::RegressionChange& c : j->changes) {
        const bool after_fault =
            disk.fault.kind != FaultKind::kNone && start >= disk.fault.start_ms;
        if (c.regressed && !after_fault) TraceHealthyRaise(disk, run, *j, c);
      }
    }
    if (trace) Trace(run, *j, slowdown);
  }
  fill_until(fleet.spec.end_ms + 1);
  return out;
}

}  // namespace iowatch::fleet
