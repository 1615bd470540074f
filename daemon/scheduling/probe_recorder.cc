#include "daemon/scheduling/probe_recorder.h"

#include <fmt/format.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdlib>
#include <system_error>

#include "collectors/disk/block_devices.h"
#include "common/clock.h"
#include "common/log.h"
#include "daemon/scheduling/probe_run_snapshot.h"
#include "probes/spec/job_spec.h"
#include "probes/verdicts/run_metrics.h"

namespace iowatch::daemon {
namespace {

constexpr int64_t kPruneEveryMs = 24LL * 3600 * 1000;
// Beyond this, a warning says that pruning does not follow the wall clock.
constexpr int64_t kClockDisagreementMs = 3600LL * 1000;

std::string KernelRelease() {
  struct utsname u {};
  return ::uname(&u) == 0 ? std::string(u.release) : std::string();
}

// Adds the run's p99 per op to the job's recent series, dropping the oldest
// beyond kRecentRuns.
void AppendRecent(std::vector<ProbeRecentSeries>& recent,
                  const std::vector<probes::MetricSample>& metrics) {
  for (const probes::MetricSample& m : metrics) {
    if (m.metric != "clat_p99_seconds") continue;
    auto it = std::ranges::find(recent, m.op, &ProbeRecentSeries::op);
    if (it == recent.end()) it = recent.insert(recent.end(), {m.op, {}});
    std::vector<double>& values = it->clat_p99_seconds;
    if (values.size() == kRecentRuns) values.erase(values.begin());
    values.push_back(m.value);
  }
}

// Counts and logs the I/Os a run left on the device. Record calls it with the
// state mutex held.
void ReportAbandonedIos(ProbeCounters& counters, const std::string& job,
                        const probes::ProbeResult& result) {
  if (result.abandoned_ios > 0) {
    counters.CountAbandonedIos(result.abandoned_ios);
    spdlog::error(
        "probe {}: the device still held {} I/Os when the run gave up waiting; their "
        "buffers are kept until iowatch restarts",
        job, result.abandoned_ios);
  }
}

}  // namespace

ProbeRecorder::ProbeRecorder(ProbeRecorderOptions options, const std::vector<std::string>& jobs)
    : options_(std::move(options)),
      sysfs_(options_.sysfs),
      own_counters_(options_.counters == nullptr ? std::make_unique<ProbeCounters>() : nullptr),
      counters_(options_.counters != nullptr ? options_.counters : own_counters_.get()),
      kernel_(KernelRelease()),
      judge_(options_.baseline, jobs) {
  for (const std::string& name : jobs) {
    if (jobs_.contains(name)) continue;
    order_.push_back(name);
    jobs_[name].published.name = name;
  }
  {
    std::lock_guard lock(state_mutex_);
    Publish();
  }
  std::lock_guard lock(store_mutex_);
  if (!EnsureStore()) return;
  SetStoreState(true, "", false);
  std::lock_guard state(state_mutex_);
  for (auto& [name, job] : jobs_) job.published.judging = judge_.Summarize(name, NowMs());
  Publish();
}

ProbeRecorder::~ProbeRecorder() = default;

int64_t ProbeRecorder::NowMs() const {
  if (options_.wall_ms) return options_.wall_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t ProbeRecorder::SteadyMs() const {
  if (options_.steady_ms) return options_.steady_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Status ProbeRecorder::PruneIfDue() {
  const int64_t now_ms = retention_clock_->Now(SteadyMs());
  if (last_prune_ms_ != 0 && now_ms - last_prune_ms_ < kPruneEveryMs) return {};
  const int64_t wall_ms = NowMs();
  if (std::abs(wall_ms - now_ms) > kClockDisagreementMs) {
    spdlog::warn(
        "probe store: the wall clock reads {} s {} the retention's clock (the time the store "
        "was opened, capped at its newest run, plus the monotonic time since); pruning "
        "follows the retention's clock",
        std::abs(wall_ms - now_ms) / 1000, wall_ms > now_ms ? "ahead of" : "behind");
  }
  auto pruned = store_->PruneRunsBefore(now_ms - options_.retention.count());
  if (!pruned) return ErrorOf(pruned);
  if (*pruned > 0) spdlog::info("probe store: pruned {} runs older than the retention", *pruned);
  last_prune_ms_ = now_ms;
  return {};
}

std::shared_ptr<const ProbeSnapshot> ProbeRecorder::Snapshot() const {
  std::lock_guard lock(state_mutex_);
  return snapshot_;
}

void ProbeRecorder::SetStoreState(bool up, const std::string& why, bool count) {
  std::lock_guard lock(state_mutex_);
  if (!up && count) counters_->CountStoreError();
  if (!store_state_known_ || up != store_up_) {
    if (up) {
      if (store_state_known_) spdlog::info("probe store {}: writable again", StorePath());
    } else {
      spdlog::error("probe store: {}; runs are not stored until it recovers (retried each run)",
                    why);
    }
  }
  store_state_known_ = true;
  store_up_ = up;
  Publish();
}

std::string ProbeRecorder::StorePath() const {
  return (options_.state_dir / probes::Store::kFileName).string();
}

bool ProbeRecorder::EnsureStore() {
  if (store_) return true;
  std::error_code ec;
  std::filesystem::create_directories(options_.state_dir, ec);
  if (ec) {
    SetStoreState(false,
                  fmt::format("cannot create {}: {}", options_.state_dir.string(), ec.message()),
                  false);
    return false;
  }
  auto store = probes::Store::OpenInStateDir(options_.state_dir);
  if (!store && probes::Store::IsDamagedStore(store.error()) && QuarantineStore(store.error())) {
    store = probes::Store::OpenInStateDir(options_.state_dir);
  }
  if (!store) {
    SetStoreState(false, store.error().ToString(), false);
    return false;
  }
  // A store whose newest run cannot be read is not usable either.
  auto newest = store->NewestRunStartMs();
  if (!newest) {
    SetStoreState(false, newest.error().ToString(), false);
    return false;
  }
  retention_clock_.emplace(NowMs(), SteadyMs(), *newest);
  last_prune_ms_ = 0;
  store_.emplace(std::move(*store));
  judge_.Load(*store_, NowMs());
  return true;
}

bool ProbeRecorder::EnsureSameFile() {
  const Status same = store_->CheckFile();
  if (same) return true;
  store_.reset();  // SQLite would go on writing into the file no longer at the path
  if (probes::Store::IsDamagedStore(same.error())) {
    if (!QuarantineStore(same.error())) return false;  // logged; retried next run
  } else {
    spdlog::error(
        "probe store {}: closed; the runs from now on go to the store at that path (created if "
        "missing: the runs and baselines of the one before are not in it)",
        same.error().ToString());
  }
  return EnsureStore();
}

bool ProbeRecorder::QuarantineStore(const Error& why) {
  const auto moved = probes::Store::Quarantine(StorePath(), NowMs() / 1000);
  if (!moved) {
    spdlog::error("probe store {} is damaged ({}) and could not be moved aside: {}", StorePath(),
                  why.ToString(), moved.error().ToString());
    return false;
  }
  counters_->CountStoreQuarantined();
  spdlog::error(
      "probe store {} is damaged ({}): moved aside to {} and a new store started; "
      "its runs and baselines are not in the new one (sqlite3 .recover may save them)",
      StorePath(), why.message, moved->string());
  return true;
}

std::string ProbeRecorder::ModelOf(DeviceId device) const {
  const auto disk = collectors::FindWholeDisk(sysfs_, major(device), minor(device));
  return disk ? disk->model : std::string();
}

probes::RunRecord ProbeRecorder::ToRecord(const ScheduledJob& job, const RunOutcome& outcome,
                                          const std::vector<probes::MetricSample>& metrics) const {
  const probes::ProbeResult& result = *outcome.probe;
  const bool ok = Completed(outcome.result);
  probes::RunRecord run;
  run.job = job.name;
  run.fingerprint = probes::JobFingerprint(result.spec);
  run.device = FormatDevice(outcome.target_device);
  run.model = ModelOf(outcome.target_device);
  run.kernel = kernel_;
  run.start_unix_ms = outcome.start_unix_ms;
  run.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(result.elapsed).count();
  run.ok = ok;
  run.error = ok ? std::string() : outcome.error;
  run.result = result;
  run.metrics = metrics;
  run.conditions = outcome.conditions;
  return run;
}

ProbeRecorder::Stored ProbeRecorder::StoreRun(const ScheduledJob& job, const RunOutcome& outcome,
                                              const std::vector<probes::MetricSample>& metrics) {
  Stored stored;
  if (!EnsureStore() || !EnsureSameFile()) {
    std::lock_guard lock(state_mutex_);
    counters_->CountStoreError();
    Publish();
    return stored;
  }
  const auto fail = [&](const Error& error) {
    store_.reset();  // reopened at the next run: the directory may have been replaced
    // Corruption found while writing: moved aside now, a new store next run.
    if (probes::Store::IsDamagedStore(error)) QuarantineStore(error);
    SetStoreState(false, error.ToString(), true);
    return Stored();
  };
  const probes::RunRecord run = ToRecord(job, outcome, metrics);
  const auto id = store_->AddRun(run);
  if (!id) return fail(id.error());
  if (run.ok) {
    Result<probes::RunVerdicts> judged = judge_.Judge(*store_, run, *id, job.judge, NowMs());
    if (!judged) return fail(judged.error());
    stored = std::move(*judged);
  }
  if (Status pruned = PruneIfDue(); !pruned) return fail(pruned.error());
  SetStoreState(true, "", false);
  return stored;
}

void ProbeRecorder::Record(const ScheduledJob& job, const RunOutcome& outcome) {
  // Skips and time-outs measured nothing; a cancelled run is partial.
  if (!outcome.probe || outcome.result == RunResult::kCancelled) return;
  const probes::ProbeResult& result = *outcome.probe;
  const bool ok = Completed(outcome.result);
  const std::vector<probes::MetricSample> metrics = probes::ExtractMetrics(result);
  Stored stored;
  {
    std::lock_guard lock(store_mutex_);
    stored = StoreRun(job, outcome, metrics);
  }
  if (!ok) return;  // an error run's partial figures stay out of the published state

  std::lock_guard lock(state_mutex_);
  JobState& state = JobStateFor(job.name);
  ProbeJobSnapshot& p = state.published;
  p.name = job.name;
  SetLastRun(p, result, metrics, outcome.start_unix_ms, outcome.target_device);
  p.last_conditions = outcome.conditions;
  ReportAbandonedIos(*counters_, job.name, result);
  NoteFallbacks(job.name, result, state);
  MergeLatencies(result, state);
  AppendRecent(p.recent, p.last_metrics);
  p.clat.clear();
  for (const auto& [op, histogram] : state.clat) {
    p.clat.push_back(Cumulative(op, histogram, state.clat_sum_seconds[op]));
  }
  if (stored) {
    const ProbeJobSnapshot before = p;
    ApplyBaseline(*stored, state);
    KeepIfUncontended(p);
    const bool contended = p.last_class.run_class == probes::RunClass::kContended;
    p.last_foreign_who = contended && options_.name_foreign_load
                             ? options_.name_foreign_load(outcome.target_device)
                             : std::string();
    NoteContention(job.name, FormatDevice(outcome.target_device), *stored, before, metrics);
  }
  Publish();
}

ProbeRecorder::JobState& ProbeRecorder::JobStateFor(const std::string& name) {
  if (!jobs_.contains(name)) {
    order_.push_back(name);
    jobs_[name].published.name = name;
  }
  return jobs_.find(name)->second;
}

void ProbeRecorder::NoteFallbacks(const std::string& job, const probes::ProbeResult& result,
                                  JobState& state) {
  ProbeJobSnapshot& p = state.published;
  p.fallbacks.clear();
  for (const probes::EngineFallback& fallback : result.fallbacks) {
    p.fallbacks.push_back(fallback.name);
    // Once per job and fallback: it repeats every run, the metric shows it.
    if (state.logged_fallbacks.insert(fallback.name).second) {
      spdlog::warn("probe {}: engine fallback {}: {}", job, fallback.name, fallback.reason);
    }
  }
}

void ProbeRecorder::MergeLatencies(const probes::ProbeResult& result, JobState& state) {
  const std::pair<const char*, const probes::DirectionStats*> directions[] = {
      {"read", &result.read}, {"write", &result.write}};
  for (const auto& [op, d] : directions) {
    if (d->clat_histogram.Count() == 0) continue;
    state.clat[op].Merge(d->clat_histogram);
    state.clat_sum_seconds[op] += ClatSumSeconds(*d);
  }
}

void ProbeRecorder::ApplyBaseline(const probes::RunVerdicts& stored, JobState& state) {
  ProbeJobSnapshot& p = state.published;
  const probes::RunJudgement& j = stored.judgement;
  p.last_class = j.classification;
  p.last_judged = j.judged;
  p.last_not_judged = j.why;
  p.last_against = j.judged ? j.against : std::string();
  p.verdicts = stored.verdicts;
  p.judged_baseline_runs = stored.judged_baseline_runs;
  p.reference_runs = stored.reference_runs;
  p.judged_load = stored.judged_load;
  p.judging = stored.judging;
  // The baseline series follow the baseline of the run's band, else the
  // last judged run's; they go only when no baseline is left (a reset).
  if (!j.baseline && j.baselines > 0) return;
  p.has_baseline = j.baseline.has_value();
  p.baseline.clear();
  if (j.baseline) {
    p.baseline = j.baseline->baseline.metrics;
    p.baseline_band = j.baseline->baseline.band;
    p.baseline_created_seconds = static_cast<double>(j.baseline->baseline.created_unix_ms) / 1000;
    p.baseline_runs = j.baseline->run_count;
  }
}

void ProbeRecorder::NoteContention(const std::string& job, const std::string& device,
                                   const probes::RunVerdicts& stored,
                                   const ProbeJobSnapshot& before,
                                   const std::vector<probes::MetricSample>& metrics) const {
  const probes::Classification& now = stored.judgement.classification;
  const bool was = before.last_class.run_class == probes::RunClass::kContended;
  const bool is = now.run_class == probes::RunClass::kContended;
  if (was == is) return;
  if (!is) {
    spdlog::info("probe {}: runs on {} are clean again ({})", job, device, now.load);
    return;
  }
  const std::string& who = jobs_.at(job).published.last_foreign_who;
  const std::string where =
      fmt::format("{}{}", device, who.empty() ? "" : fmt::format(" ({})", who));
  // The run's own figure first, as an operator reads it: "read lat p99 3.9 ms".
  std::string figure;
  for (const probes::MetricSample& m : metrics) {
    if (m.metric != "lat_p99_seconds") continue;
    figure = fmt::format("{} lat p99 {:.3g} ms, ", m.op, m.value * 1e3);
    break;
  }
  const probes::RunJudgement& j = stored.judgement;
  if (j.judged) {
    spdlog::info(
        "probe {}: {}contended on {}: {}; judged against {}", job, figure, where, now.load,
        j.other_conditions ? j.against : "the baseline of " + probes::DescribeBand(now.band));
  } else {
    // j.why begins with the load: "contended (others did …): no baseline …".
    spdlog::info("probe {}: {}on {}, not judged: {}", job, figure, where, j.why);
  }
}

void ProbeRecorder::Publish() {
  auto snapshot = std::make_shared<ProbeSnapshot>();
  for (const std::string& name : order_) snapshot->jobs.push_back(jobs_.at(name).published);
  snapshot->store_up = store_up_;
  snapshot->store_errors_total = counters_->StoreErrors();
  snapshot_ = std::move(snapshot);
}

}  // namespace iowatch::daemon
