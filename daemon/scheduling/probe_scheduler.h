// ProbeScheduler: decides when each configured probe job runs, and never
// runs one itself. Tick() starts every job that is due, whose device is free,
// within the global limit, and whose device is not busy with other work;
// a JobExecutor runs it (in production ThreadJobExecutor, on its worker
// thread) and reports back through OnFinished(). Time comes from an injected
// clock and jitter from a seeded generator, so tests drive it tick by tick
// with a fake executor and no threads.
//
// Rules (docs/configuration.md, "Probes"):
// - Slots: the first at start + U[0, jitter], then each at the previous slot
//   + every + U[-jitter, +jitter]. Slots that pass while a job waits or runs
//   are dropped, not made up.
// - Exclusion: never two runs on one device (a partition counts as its whole
//   disk, see ResolveProbeDevice), at most max_concurrent at once. A job
//   whose device or slot is taken waits; that is not a skip.
// - Busy-skip: when the device's utilisation over busy_window (our own runs
//   on it left out, see DeviceBusyTracker) is above busy_threshold, the slot
//   is skipped (skips{reason="busy"}) and tried again after busy_retry, up to
//   max_skips skips in all; then, or when the next try would reach the job's
//   next slot, the slot is given up: a run with result "skipped". An unknown
//   utilisation (too few samples, a device not in diskstats) is not busy: a
//   probe that never runs hides more than one that runs beside some load.
// - Held I/O: while the job's device still holds I/Os of a run that gave up
//   on it (a hung device, AbandonedIoPool), or while too many are held in
//   all, the slot is given up at once (skips{reason="abandoned_io"} and a
//   run "skipped"): probing it again would leave more behind.
// - Timeouts: the executor gets the job's timeout as RunJob's hard limit;
//   if no result arrives within timeout + 10 s (the engines' 5 s wait for
//   I/O in flight, and 5 more) the run is counted as an error
//   ("timed out"), its token is cancelled and its device freed; a result that
//   comes later with a measurement goes to the outcome sink all the same (it
//   records the hang), counted no second time.
// - Shutdown() cancels running probes and starts no more; their outcome is
//   "cancelled", which the outcome sink must not store (partial results).
//
// Thread-safety: every public member takes an internal mutex, so Tick (the
// io_context thread) and OnFinished (the worker) may race. The executor and
// the outcome sink are called without that mutex held, so they may call back
// (an executor may even report from inside Start); the device resolver and
// the busy source are called with it held and must not.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "daemon/scheduling/abandoned_io_pool.h"
#include "daemon/scheduling/device_busy.h"
#include "daemon/scheduling/probe_counters.h"
#include "daemon/scheduling/probe_run.h"
#include "probes/run/probe_result.h"
#include "probes/spec/job_spec.h"
#include "probes/verdicts/run_conditions.h"

namespace iowatch::daemon {

// probes.jobs with relative targets placed under `state_dir`; none when
// probes.enabled is false.
std::vector<ScheduledJob> ScheduledJobsFrom(const config::ProbesConfig& probes,
                                            const std::filesystem::path& state_dir);

struct SchedulerPolicy {
  uint32_t max_concurrent = 1;
  double busy_threshold = 0.5;
  double busy_window_s = 60;
  double busy_retry_s = 60;
  uint32_t max_skips = 10;
};
SchedulerPolicy SchedulerPolicyFrom(const config::ProbesConfig& probes);

class JobExecutor {
 public:
  virtual ~JobExecutor() = default;
  // Runs `run` (asynchronously in production) and then calls
  // ProbeScheduler::OnFinished(run.id, outcome) exactly once.
  virtual void Start(const ProbeRun& run) = 0;
};

class ProbeScheduler {
 public:
  using DeviceResolver = std::function<std::optional<DeviceId>(const probes::JobSpec&)>;
  using OutcomeSink = std::function<void(const ScheduledJob&, const RunOutcome&)>;

  struct Dependencies {
    std::function<double()> clock;  // monotonic seconds
    uint64_t seed = 0;              // for jitter
    BusySource* busy = nullptr;     // may be null: never busy
    JobExecutor* executor = nullptr;
    DeviceResolver resolve_device;  // null: every job on one unknown device
    // Every outcome the scheduler accepts, timeouts and give-ups included;
    // called on the thread of Tick or OnFinished.
    OutcomeSink on_outcome;
    // Where runs and skips are counted (serve's registry); null: counters
    // of the scheduler's own. Must outlive the scheduler.
    ProbeCounters* counters = nullptr;
    // The I/Os hung devices still hold from runs that gave up: no run starts
    // on such a device, none at all beyond AbandonedIoPool::kMaxHeldIos; null:
    // none held. Must outlive the scheduler.
    AbandonedIoPool* abandoned = nullptr;
  };

  // The first Tick sets the first slots (and asks the busy source to watch
  // each job's device), so construction does no I/O.
  ProbeScheduler(std::vector<ScheduledJob> jobs, SchedulerPolicy policy, Dependencies deps);
  ~ProbeScheduler();
  ProbeScheduler(const ProbeScheduler&) = delete;
  ProbeScheduler& operator=(const ProbeScheduler&) = delete;

  // Starts what is due; returns the monotonic time of the next thing to do
  // (+inf when nothing is pending). Call it at that time, and soon after
  // each OnFinished (a waiting job may now have its device).
  double Tick();

  // The executor's report. Returns false (and drops it) for a run the
  // scheduler no longer waits for (timed out, or unknown).
  bool OnFinished(uint64_t run_id, RunOutcome outcome);
  // A passive regression on the whole disk `device` asks its jobs to
  // confirm it: each job on it that is neither running nor retrying, nor
  // asked within `min_gap_s`, runs at the next Tick instead of at its slot,
  // which follows (the slots after are unchanged; busy-skip and exclusion
  // apply as to any slot). Returns the jobs brought forward.
  std::vector<std::string> Confirm(DeviceId device, double min_gap_s);

  void Shutdown();
  SchedulerStatus Status() const;

 private:
  struct Job;
  struct Emit;  // an outcome to report once the mutex is released
  struct Device {
    uint64_t run_id = 0;  // 0: no probe on it
    std::string job;
    std::deque<TimeSpan> runs;  // our recent runs on it, oldest first
  };

  double NextSlot(const ScheduledJob& job, double previous_s);
  void ConsumeSlot(Job& job, double now_s);
  void Finish(Job& job, double now_s, RunOutcome outcome, std::vector<Emit>& emits);
  void TryStart(Job& job, double now_s, std::vector<ProbeRun>& starts, std::vector<Emit>& emits);
  // Why the device may not be probed now for I/O held; nullopt: it may.
  std::optional<std::string> HoldsAbandonedIo(DeviceId id) const;
  // The slot given up: a run "skipped" for `why`, and the next slot.
  void GiveUpSlot(Job& job, double now_s, const std::string& why, std::vector<Emit>& emits);

  const SchedulerPolicy policy_;
  const Dependencies deps_;
  std::unique_ptr<ProbeCounters> own_counters_;  // when deps_.counters is null
  ProbeCounters* counters_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Job>> jobs_;
  std::map<DeviceId, Device> devices_;
  std::mt19937_64 random_;
  uint64_t next_run_id_ = 1;
  uint32_t running_ = 0;
  // Runs written off as timed out whose executor has not reported yet.
  std::map<uint64_t, const ScheduledJob*> written_off_;
  bool started_ = false;
  bool shut_down_ = false;
};

}  // namespace iowatch::daemon
