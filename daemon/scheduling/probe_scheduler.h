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
#include "probes/baseline/run_conditions.h"
#include "probes/run/probe_result.h"
#include "probes/spec/job_spec.h"

namespace iowatch::daemon {

struct ScheduledJob {
  std::string name;
  probes::JobSpec spec;  // target paths absolute (config::ResolveProbeTarget)
  std::chrono::milliseconds every{15 * 60 * 1000};
  std::chrono::milliseconds jitter{60 * 1000};
  std::chrono::milliseconds timeout{60 * 1000};
  std::vector<std::string> judge;  // metrics judged; empty: the baseline policy's
};

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

// Set by the scheduler to stop one run; RunOptions::cancel reads flag().
class CancelToken {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }
  const std::atomic<bool>* flag() const { return &cancelled_; }

  // The executor's account of preparing the target, which a first fill of a
  // large file can make long: that time is not the run's (its timeout is the
  // runner's hard limit), so the scheduler's write-off clock leaves it out.
  void Preparing() { preparing_.store(true, std::memory_order_relaxed); }
  void Prepared(double seconds) {
    prepare_s_.store(seconds, std::memory_order_relaxed);
    preparing_.store(false, std::memory_order_release);
  }
  bool preparing() const { return preparing_.load(std::memory_order_acquire); }
  double prepare_seconds() const { return prepare_s_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> preparing_{false};
  std::atomic<double> prepare_s_{0};
};

// One run handed to the executor, a copy it may keep on another thread.
struct ProbeRun {
  uint64_t id = 0;  // give it back to OnFinished
  ScheduledJob job;
  DeviceId device = 0;  // the scheduler's device (whole disk), 0 when unknown
  std::shared_ptr<CancelToken> cancel;
  // Seconds to wait before measuring the device's load ahead of the run
  // (RunConditions::before): the previous probe run on it ended so recently
  // that others are still catching up on the work it held back.
  double settle_s = 0;
};

// kContended: completed, but others' I/O on the disk was above the
// contention policy's level (probes/baseline/run_class.h): stored and judged
// only against runs of a comparable load, and counted apart from ok.
enum class RunResult { kOk, kError, kSkipped, kCancelled, kContended };
// "ok", "error", "skipped", "cancelled", "contended"
std::string_view ToString(RunResult result);
// The run completed and measured (ok or contended).
inline bool Completed(RunResult result) {
  return result == RunResult::kOk || result == RunResult::kContended;
}

struct RunOutcome {
  RunResult result = RunResult::kError;
  std::string error;  // why, for kError and kSkipped
  // What was measured: kOk, and kError after an I/O error or the hard limit
  // (partial); also kCancelled (partial, not to be stored).
  std::optional<probes::ProbeResult> probe;
  DeviceId target_device = 0;  // the device holding the probe file (PreparedTarget)
  std::string target_path;
  int64_t start_unix_ms = 0;  // wall clock at the run's start, for the store
  // What else the device and host did during the measured phase.
  std::optional<probes::RunConditions> conditions;

  // An outcome with nothing measured.
  static RunOutcome Of(RunResult result, std::string error = {}) {
    RunOutcome outcome;
    outcome.result = result;
    outcome.error = std::move(error);
    return outcome;
  }
};

class JobExecutor {
 public:
  virtual ~JobExecutor() = default;
  // Runs `run` (asynchronously in production) and then calls
  // ProbeScheduler::OnFinished(run.id, outcome) exactly once.
  virtual void Start(const ProbeRun& run) = 0;
};

// Read back from ProbeCounters, where they are counted.
struct RunCounts {
  uint64_t ok = 0;
  uint64_t error = 0;
  uint64_t skipped = 0;
  uint64_t cancelled = 0;
  uint64_t contended = 0;
  bool operator==(const RunCounts&) const = default;
};

struct JobStatus {
  std::string name;
  double interval_seconds = 0;     // the job's `every`
  std::optional<DeviceId> device;  // as last resolved
  RunCounts runs;
  std::map<std::string, uint64_t> skips;  // by reason ("busy")
  bool running = false;
  double next_attempt_s = 0;  // monotonic; a past time when it waits for a device
  std::optional<double> last_start_s, last_end_s, last_duration_s;  // monotonic
  std::optional<RunResult> last_result;
  std::string last_error;
  int64_t last_start_unix_ms = 0;  // of the last run the executor reported
};

struct DeviceStatus {
  DeviceId device = 0;
  bool probe_running = false;  // for a gauge that tells probe time apart on dashboards
  std::string job;             // the running job, if any
};

struct SchedulerStatus {
  std::vector<JobStatus> jobs;        // in configuration order
  std::vector<DeviceStatus> devices;  // every device a job resolved to, by id
  uint32_t running = 0;
  bool shut_down = false;
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
