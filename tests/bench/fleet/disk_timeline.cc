#include "tests/bench/fleet/disk_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "probes/verdicts/job_judge.h"
#include "probes/verdicts/load_model.h"
#include "probes/verdicts/memory_baseline_source.h"
#include "probes/verdicts/run_stress.h"
#include "tests/bench/fleet/full_resolution_run.h"
#include "tests/bench/fleet/passive_timeline.h"

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

// IOWATCH_FLEET_FAULT_TRACE=1: each run of a faulted disk from its fault's
// start to the judge's first raise after it (at most a day of runs), on
// stderr: its class, what judged it, and the drift watch's step evidence.
bool TraceFaults() {
  static const bool on = std::getenv("IOWATCH_FLEET_FAULT_TRACE") != nullptr;
  return on;
}

void TraceFaultRun(const DiskSpec& disk, const RunRecord& run, const RunJudgement& j,
                   const probes::SeriesState& state, uint64_t drift_runs_before,
                   int64_t fleet_start_ms) {
  std::string bad;
  for (const MetricVerdict& v : j.verdicts) {
    if (v.judged && v.bad) bad += " " + v.metric;
    if (!v.note.empty() && v.metric == "iops") bad += " [iops set aside]";
  }
  for (const probes::RegressionChange& c : j.changes) {
    bad +=
        (c.regressed ? " RAISED" : " cleared") + std::string(c.drift ? "(drift) " : " ") + c.metric;
  }
  const auto& all = state.drift.All();
  const auto it = all.find(std::make_pair(std::string("read"), std::string("iops")));
  const bool has = it != all.end();
  const probes::RunStress stress =
      run.conditions ? probes::StressOf(*run.conditions) : probes::RunStress{};
  std::fprintf(stderr,
               "FAULT %s/%s %s +%.0f min day %.2f class %d band %d judged %d other %d ref %d "
               "calib_until_day %.2f cal_runs %llu drift_fed %d step %.2f step_runs %u worse %.2f "
               "load %.0f steal %.4f wait %.4f |%s\n",
               InstanceOf(disk.host).c_str(), ProbeOf(disk.slot).c_str(), ToString(disk.fault.kind),
               static_cast<double>(run.start_unix_ms - disk.fault.start_ms) / kMinuteMs,
               static_cast<double>(run.start_unix_ms - fleet_start_ms) / kDayMs,
               static_cast<int>(j.classification.run_class), j.classification.band,
               j.judged ? 1 : 0, j.other_conditions ? 1 : 0,
               state.drift.Reference().empty() ? 0 : 1,
               static_cast<double>(state.drift.CalibrateUntilMs() - fleet_start_ms) / kDayMs,
               static_cast<unsigned long long>(has ? it->second.calibration_runs : 0),
               has && it->second.runs > drift_runs_before ? 1 : 0, has ? it->second.step : 0.0,
               has ? it->second.step_runs : 0u, has ? it->second.worse : 0.0, stress.load,
               stress.steal, stress.wait, bad.c_str());
}

// IOWATCH_FLEET_DUMP=FILE: every run of every disk as the drift watch saw
// its read IOPS, one line each, for replaying variants of its rules offline:
// "disk minute class u sigma calibrating steal load per_run_raise drift_raise"
// (u: the log-ratio to the reference's prediction in its σ, worse-positive;
// nan where the reference predicts nothing), after a line "H disk kind
// fault_minute" per disk.
FILE* DumpFile() {
  static FILE* const file = [] {
    const char* path = std::getenv("IOWATCH_FLEET_DUMP");
    return path == nullptr ? nullptr : std::fopen(path, "w");
  }();
  return file;
}

void DumpRun(const probes::SeriesState& state, const RunRecord& run, const RunJudgement& j,
             const probes::BaselinePolicy& policy, size_t disk, int64_t fleet_start_ms,
             std::string& lines) {
  double u = std::nan("");
  double sigma = std::nan("");
  const probes::RunStress stress =
      run.conditions ? probes::StressOf(*run.conditions) : probes::RunStress{};
  if (!state.drift.Points().empty() && run.conditions) {
    const std::optional<probes::Baseline> ref =
        probes::ModelBaselineAt(stress, state.drift.Points(), policy).baseline;
    if (ref) {
      for (const probes::MetricBaseline& m : ref->metrics) {
        if (m.op != "read" || m.metric != "iops" || m.median <= 0) continue;
        sigma = std::log1p(m.spread / m.median);
        u = -std::log(MetricOf(run, "iops") / m.median) / sigma;
      }
    }
  }
  const auto& all = state.drift.All();
  const auto it = all.find(std::make_pair(std::string("read"), std::string("iops")));
  // Calibrating when this run was: it added to the calibration's runs.
  const bool calibrating = it != all.end() && run.start_unix_ms < state.drift.CalibrateUntilMs();
  bool per_run = false;
  bool drift = false;
  for (const probes::RegressionChange& c : j.changes) {
    if (!c.regressed) continue;
    (c.drift ? drift : per_run) = true;
  }
  lines += fmt::format("{} {} {} {:.4f} {:.4f} {} {:.4f} {:.0f} {} {}\n", disk,
                       (run.start_unix_ms - fleet_start_ms) / kMinuteMs,
                       static_cast<int>(j.classification.run_class), u, sigma, calibrating ? 1 : 0,
                       stress.steal, stress.load, per_run ? 1 : 0, drift ? 1 : 0);
}

uint64_t DriftRuns(const probes::SeriesState& state) {
  const auto& all = state.drift.All();
  const auto it = all.find(std::make_pair(std::string("read"), std::string("iops")));
  return it == all.end() ? 0 : it->second.runs;
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
  std::string dump;
  const size_t disk_index = static_cast<size_t>(disk.host * kDisksPerHost + disk.slot);
  if (DumpFile() != nullptr) {
    dump = fmt::format("H {} {} {}\n", disk_index, ToString(disk.fault.kind),
                       disk.fault.kind == FaultKind::kNone
                           ? int64_t{-1}
                           : (disk.fault.start_ms - fleet.start_ms) / kMinuteMs);
  }
  int64_t id = 0;
  std::vector<RunSpan> spans;  // the runs, for the passive judge's windows
  for (const int64_t start : RunStarts(fleet, disk, rng)) {
    const double slowdown = noise.Draw(rng) / SpeedAt(disk, start);
    const RunRecord run = FullResolution(probe.Run(++id, start, slowdown));
    if (id == 1) CheckFirstRun(run, direct.Run(id, start, slowdown));
    fill_until(run.start_unix_ms + run.duration_ms);
    spans.emplace_back(run.start_unix_ms, run.start_unix_ms + run.duration_ms);
    source.Add(run);
    const uint64_t drift_runs_before = DriftRuns(state);
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
    if (DumpFile() != nullptr) DumpRun(state, run, *j, policy, disk_index, fleet.start_ms, dump);
    if (TraceFaults() && disk.fault.kind != FaultKind::kNone &&
        disk.fault.kind != FaultKind::kFirmware && start >= disk.fault.start_ms &&
        start < disk.fault.start_ms + kDayMs &&
        (out.counts.first_raise_ms < 0 || out.counts.first_raise_ms >= start)) {
      TraceFaultRun(disk, run, *j, state, drift_runs_before, fleet.start_ms);
    }
  }
  fill_until(fleet.spec.end_ms + 1);
  if (fleet.spec.passive_window_ms > 0) {
    SimulatePassive(fleet, disk, {.sigma_dev = noise.LogSigma(), .request_cv = noise.RequestCv()},
                    fleet.spec.passive_window_ms, spans, out);
  }
  if (DumpFile() != nullptr) {
    static std::mutex mutex;
    const std::lock_guard lock(mutex);
    std::fwrite(dump.data(), 1, dump.size(), DumpFile());
    std::fflush(DumpFile());
  }
  return out;
}

}  // namespace iowatch::fleet
