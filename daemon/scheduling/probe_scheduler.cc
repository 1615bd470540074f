#include "daemon/scheduling/probe_scheduler.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "common/clock.h"
#include "common/log.h"
#include "probes/engines/engine_waits.h"

namespace iowatch::daemon {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// How long after its timeout a run may still report before it is written off:
// a run on a hung device reports after the engine's wait for its I/Os in
// flight (and hands over what it gave up on, which keeps the device from
// being probed), and 5 s more; written off sooner, the device was freed
// before that and a new run went to the hung device too.
constexpr double kTimeoutGraceS =
    std::chrono::duration<double>(probes::kCloseDrainTimeout).count() + 5;
// While a run prepares its target, a first fill may take until the file is
// written at this rate; a disk slower than that is written off as hung.
constexpr double kMinFillBytesPerS = 4 << 20;
// A probe's last I/Os complete, and the sample after it is read, a little
// after the executor reports: leave that much more of the device's time out.
constexpr double kExcludeTailS = 1;
// Right after a probe run, others catch up on what it held back: behind a
// 3 s run on this VM, a rate-limited fio load did 21,000 IOPS in the next
// second against its 1,800 steady. The load measured before a run starts
// this long after the device's previous probe run at the earliest.
constexpr double kSettleAfterRunS = 1;

}  // namespace

struct ProbeScheduler::Job {
  ScheduledJob config;
  std::optional<DeviceId> device;
  double due_s = 0;        // the current slot
  double following_s = 0;  // the slot after it, drawn in advance
  std::optional<double> retry_s;
  uint32_t slot_skips = 0;
  double confirm_asked_s = -kInfinity;  // the last Confirm that brought it forward
  uint64_t run_id = 0;                  // 0: not running
  double run_start_s = 0;
  DeviceId run_device = 0;
  std::shared_ptr<CancelToken> token;
  JobStatus status;

  double Attempt() const { return retry_s.value_or(due_s); }

  // When a running job with no result is written off: its timeout (the
  // runner's hard limit) and a grace, counted without the time spent
  // preparing the target (a first fill), which has a limit of its own.
  double WriteOffDeadline() const {
    const double run_limit_s = run_start_s + ToSeconds(config.timeout) + kTimeoutGraceS;
    if (token == nullptr) return run_limit_s;
    if (token->preparing()) {
      return run_limit_s + static_cast<double>(config.spec.size) / kMinFillBytesPerS;
    }
    return run_limit_s + token->prepare_seconds();
  }
};

struct ProbeScheduler::Emit {
  const ScheduledJob* job;  // jobs_ never shrinks, so this outlives the mutex
  RunOutcome outcome;
};

std::vector<ScheduledJob> ScheduledJobsFrom(const config::ProbesConfig& probes,
                                            const std::filesystem::path& state_dir) {
  std::vector<ScheduledJob> jobs;
  if (!probes.enabled) return jobs;
  for (const config::ProbeJobConfig& job : probes.jobs) {
    jobs.push_back({job.name, config::ResolveProbeTarget(job.spec, state_dir), job.every,
                    job.jitter, job.timeout, job.judge});
  }
  return jobs;
}

SchedulerPolicy SchedulerPolicyFrom(const config::ProbesConfig& probes) {
  return {probes.max_concurrent, probes.busy_threshold, ToSeconds(probes.busy_window),
          ToSeconds(probes.busy_retry), probes.max_skips};
}

ProbeScheduler::ProbeScheduler(std::vector<ScheduledJob> jobs, SchedulerPolicy policy,
                               Dependencies deps)
    : policy_(policy),
      deps_(std::move(deps)),
      own_counters_(deps_.counters == nullptr ? std::make_unique<ProbeCounters>() : nullptr),
      counters_(deps_.counters != nullptr ? deps_.counters : own_counters_.get()),
      random_(deps_.seed) {
  for (ScheduledJob& config : jobs) {
    counters_->AddJob(config.name);
    auto job = std::make_unique<Job>();
    job->status.name = config.name;
    job->status.interval_seconds = std::chrono::duration<double>(config.every).count();
    job->config = std::move(config);
    jobs_.push_back(std::move(job));
  }
}

ProbeScheduler::~ProbeScheduler() = default;

// The config guarantees jitter <= every / 2; clamping here too keeps every
// slot at least half a period after the one before, whoever built the job.
double ProbeScheduler::NextSlot(const ScheduledJob& job, double previous_s) {
  const double every_s = std::max(ToSeconds(job.every), 0.001);
  const double jitter_s = std::min(ToSeconds(job.jitter), every_s / 2);
  return previous_s + every_s +
         std::uniform_real_distribution<double>(-jitter_s, jitter_s)(random_);
}

void ProbeScheduler::ConsumeSlot(Job& job, double now_s) {
  job.retry_s.reset();
  job.slot_skips = 0;
  do {
    job.due_s = job.following_s;
    job.following_s = NextSlot(job.config, job.due_s);
  } while (job.due_s <= now_s);
}

void ProbeScheduler::Finish(Job& job, double now_s, RunOutcome outcome, std::vector<Emit>& emits) {
  Device& device = devices_[job.run_device];
  device.run_id = 0;
  device.job.clear();
  device.runs.push_back({job.run_start_s, now_s});
  --running_;
  job.run_id = 0;
  job.token.reset();
  JobStatus& status = job.status;
  status.running = false;
  status.last_end_s = now_s;
  status.last_duration_s = now_s - job.run_start_s;
  status.last_result = outcome.result;
  status.last_error = outcome.error;
  if (outcome.start_unix_ms != 0) status.last_start_unix_ms = outcome.start_unix_ms;
  counters_->CountRun(job.config.name, outcome.result);
  emits.push_back({&job.config, std::move(outcome)});
}

std::optional<std::string> ProbeScheduler::HoldsAbandonedIo(DeviceId id) const {
  if (deps_.abandoned == nullptr) return std::nullopt;
  deps_.abandoned->Poll();
  if (const uint32_t here = deps_.abandoned->HeldOn(id); here > 0) {
    return fmt::format("abandoned_io: {} still holds {} I/Os of a run that gave up on it",
                       FormatDevice(id), here);
  }
  if (const uint32_t all = deps_.abandoned->HeldInAll(); all >= AbandonedIoPool::kMaxHeldIos) {
    return fmt::format("abandoned_io: hung devices hold {} I/Os of probe runs (at most {})", all,
                       AbandonedIoPool::kMaxHeldIos);
  }
  return std::nullopt;
}

void ProbeScheduler::GiveUpSlot(Job& job, double now_s, const std::string& why,
                                std::vector<Emit>& emits) {
  spdlog::info("probe {}: slot skipped after {} tries, {}", job.config.name,
               std::max<uint64_t>(job.slot_skips, 1), why);
  counters_->CountRun(job.config.name, RunResult::kSkipped);
  job.status.last_result = RunResult::kSkipped;
  job.status.last_error = why;
  emits.push_back({&job.config, RunOutcome::Of(RunResult::kSkipped, why)});
  ConsumeSlot(job, now_s);
}

void ProbeScheduler::TryStart(Job& job, double now_s, std::vector<ProbeRun>& starts,
                              std::vector<Emit>& emits) {
  if (deps_.resolve_device) {
    const std::optional<DeviceId> resolved = deps_.resolve_device(job.config.spec);
    if (resolved && resolved != job.device && deps_.busy != nullptr) deps_.busy->Watch(*resolved);
    if (resolved) job.device = resolved;
    job.status.device = job.device;
  }
  const DeviceId id = job.device.value_or(0);
  Device& device = devices_[id];
  if (device.run_id != 0 || running_ >= policy_.max_concurrent) return;  // wait, no skip
  if (const auto why = HoldsAbandonedIo(id)) {
    counters_->CountSkip(job.config.name, "abandoned_io");
    return GiveUpSlot(job, now_s, *why, emits);
  }

  if (deps_.busy != nullptr && job.device) {
    const double from_s = now_s - policy_.busy_window_s;
    while (!device.runs.empty() && device.runs.front().end_s + kExcludeTailS < from_s) {
      device.runs.pop_front();
    }
    std::vector<TimeSpan> exclude(device.runs.begin(), device.runs.end());
    for (TimeSpan& span : exclude) span.end_s += kExcludeTailS;
    const auto utilization = deps_.busy->Utilization(id, policy_.busy_window_s, now_s, exclude);
    if (!utilization) {
      spdlog::debug("probe {}: utilisation of {} unknown, running anyway", job.config.name,
                    FormatDevice(id));
    } else if (*utilization > policy_.busy_threshold) {
      counters_->CountSkip(job.config.name, "busy");
      ++job.slot_skips;
      const double retry_s = now_s + policy_.busy_retry_s;
      if (job.slot_skips < policy_.max_skips && retry_s < job.following_s) {
        job.retry_s = retry_s;
        return;
      }
      return GiveUpSlot(
          job, now_s,
          fmt::format("busy: {} was {:.0f}% utilised (threshold {:.0f}%)", FormatDevice(id),
                      *utilization * 100, policy_.busy_threshold * 100),
          emits);
    }
  }

  job.run_id = next_run_id_++;
  job.run_start_s = now_s;
  job.run_device = id;
  job.token = std::make_shared<CancelToken>();
  job.status.running = true;
  job.status.last_start_s = now_s;
  device.run_id = job.run_id;
  device.job = job.config.name;
  ++running_;
  ConsumeSlot(job, now_s);
  const double since_last_run_s =
      device.runs.empty() ? kInfinity : now_s - device.runs.back().end_s;
  starts.push_back(ProbeRun{job.run_id, job.config, id, job.token,
                            std::max(0.0, kSettleAfterRunS - since_last_run_s)});
}

std::vector<std::string> ProbeScheduler::Confirm(DeviceId device, double min_gap_s) {
  std::vector<std::string> asked;
  std::lock_guard lock(mutex_);
  if (!started_ || shut_down_) return asked;
  const double now_s = deps_.clock();
  for (auto& job : jobs_) {
    if (job->device != device || job->run_id != 0 || job->retry_s) continue;
    if (now_s - job->confirm_asked_s < min_gap_s || job->due_s <= now_s) continue;
    job->confirm_asked_s = now_s;
    // The slot it had comes after, as the one drawn after it would have.
    job->following_s = job->due_s;
    job->due_s = now_s;
    asked.push_back(job->config.name);
  }
  return asked;
}

double ProbeScheduler::Tick() {
  std::vector<ProbeRun> starts;
  std::vector<Emit> emits;
  double next_s = kInfinity;
  {
    std::lock_guard lock(mutex_);
    const double now_s = deps_.clock();
    if (!started_) {
      started_ = true;
      for (auto& job : jobs_) {
        if (deps_.resolve_device) job->device = deps_.resolve_device(job->config.spec);
        job->status.device = job->device;
        if (job->device) {
          devices_.try_emplace(*job->device);
          if (deps_.busy != nullptr) deps_.busy->Watch(*job->device);
        }
        const double jitter_s = ToSeconds(job->config.jitter);
        job->due_s = now_s + std::uniform_real_distribution<double>(0, jitter_s)(random_);
        job->following_s = NextSlot(job->config, job->due_s);
      }
    }
    for (auto& job : jobs_) {
      if (job->run_id == 0) continue;
      if (now_s < job->WriteOffDeadline()) continue;
      const double limit_s = job->WriteOffDeadline() - job->run_start_s;
      spdlog::warn("probe {}: no result {:.0f} s after its start; counted as an error",
                   job->config.name, limit_s);
      job->token->Cancel();
      written_off_.emplace(job->run_id, &job->config);
      Finish(*job, now_s,
             RunOutcome::Of(RunResult::kError,
                            fmt::format("timed out: no result within {:.0f} s", limit_s)),
             emits);
    }
    if (!shut_down_) {
      std::vector<Job*> due;
      for (auto& job : jobs_) {
        if (job->run_id == 0 && job->Attempt() <= now_s) due.push_back(job.get());
      }
      std::ranges::stable_sort(due, {}, &Job::Attempt);  // the longest waiting first
      for (Job* job : due) TryStart(*job, now_s, starts, emits);
    }
    for (auto& job : jobs_) {
      if (job->run_id != 0) {
        next_s = std::min(next_s, job->WriteOffDeadline());
      } else if (!shut_down_ && job->Attempt() > now_s) {
        next_s = std::min(next_s, job->Attempt());
      }
    }
  }
  for (const ProbeRun& run : starts) deps_.executor->Start(run);
  if (deps_.on_outcome) {
    for (const Emit& emit : emits) deps_.on_outcome(*emit.job, emit.outcome);
  }
  return next_s;
}

bool ProbeScheduler::OnFinished(uint64_t run_id, RunOutcome outcome) {
  std::vector<Emit> emits;
  {
    std::lock_guard lock(mutex_);
    const auto it = std::ranges::find_if(jobs_, [&](const auto& j) { return j->run_id == run_id; });
    if (run_id == 0 || it == jobs_.end()) {
      // Written off as timed out, and counted so: what it measured until the
      // device let go is still the record of the hang (adversarial review
      // found it dropped), so it goes to the store, counted no second time.
      const auto late = written_off_.find(run_id);
      if (late == written_off_.end() || !outcome.probe) {
        spdlog::debug("probe run {}: result ({}) arrived after it was written off; dropped", run_id,
                      ToString(outcome.result));
        if (late != written_off_.end()) written_off_.erase(late);
        return false;
      }
      emits.push_back({late->second, std::move(outcome)});
      written_off_.erase(late);
    } else {
      Finish(**it, deps_.clock(), std::move(outcome), emits);
    }
  }
  if (deps_.on_outcome) deps_.on_outcome(*emits.front().job, emits.front().outcome);
  return true;
}

void ProbeScheduler::Shutdown() {
  std::lock_guard lock(mutex_);
  shut_down_ = true;
  for (auto& job : jobs_) {
    if (job->token) job->token->Cancel();
  }
}

SchedulerStatus ProbeScheduler::Status() const {
  std::lock_guard lock(mutex_);
  SchedulerStatus status;
  for (const auto& job : jobs_) {
    status.jobs.push_back(job->status);
    status.jobs.back().next_attempt_s = job->Attempt();
    status.jobs.back().runs = counters_->Runs(job->config.name);
    status.jobs.back().skips = counters_->Skips(job->config.name);
  }
  for (const auto& [id, device] : devices_) {
    if (id == 0) continue;  // unknown: no series to attach a gauge to
    status.devices.push_back({id, device.run_id != 0, device.job});
  }
  status.running = running_;
  status.shut_down = shut_down_;
  return status;
}

}  // namespace iowatch::daemon
