// The probe scheduler's value types, apart from the scheduler so that what
// only reads or counts them (the counters, the renderers, the recorder, the
// status page) needs neither the scheduler nor the config: a job as
// scheduled, one run handed to the executor with its cancel token, what the
// run came to, and the scheduler's status as read back.
// Thread-safety: plain values, but CancelToken, which is shared between the
// scheduler and the run's thread (atomics).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/scheduling/device_busy.h"
#include "probes/verdicts/run_conditions.h"
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
// contention policy's level (probes/verdicts/run_class.h): stored and judged
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

}  // namespace iowatch::daemon
