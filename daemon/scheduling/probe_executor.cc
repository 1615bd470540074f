#include "daemon/scheduling/probe_executor.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

#include "collectors/disk/block_devices.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "daemon/scheduling/conditions_reading.h"
#include "probes/pipeline/run_probe.h"

namespace iowatch::daemon {
namespace {

RunOutcome Failed(std::string error) { return RunOutcome::Of(RunResult::kError, std::move(error)); }

// How the run ended, as the scheduler counts it (without the result itself,
// which the caller moves in).
RunOutcome OutcomeOf(const probes::ProbeOutcome& probe, std::chrono::milliseconds timeout) {
  RunOutcome outcome;
  outcome.target_device = probe.device;
  outcome.target_path = probe.target_path;
  outcome.start_unix_ms = probe.start_unix_ms;
  const probes::ProbeResult& result = probe.result;
  switch (result.end) {
    case probes::RunEnd::kCompleted:
      outcome.result = RunResult::kOk;
      break;
    case probes::RunEnd::kInterrupted:
      outcome.result = RunResult::kCancelled;
      outcome.error = "cancelled";
      break;
    case probes::RunEnd::kTimedOut:
      outcome.result = RunResult::kError;
      outcome.error = fmt::format("timed out: stopped by the {} s limit", ToSeconds(timeout));
      break;
    case probes::RunEnd::kFailed:
      outcome.result = RunResult::kError;
      outcome.error = result.error ? result.error->ToString() : "I/O error";
      break;
  }
  return outcome;
}

// Sleeps `seconds` in short steps, so a shutdown is not kept waiting; false
// when the run was cancelled meanwhile.
bool WaitUnlessCancelled(const ProbeRun& run, double seconds) {
  using Clock = std::chrono::steady_clock;
  constexpr Clock::duration kStep = std::chrono::milliseconds(50);
  const Clock::time_point until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                     std::chrono::duration<double>(seconds));
  for (Clock::time_point now = Clock::now(); now < until; now = Clock::now()) {
    if (run.cancel && run.cancel->cancelled()) return false;
    std::this_thread::sleep_for(std::min(kStep, until - now));
  }
  return !(run.cancel && run.cancel->cancelled());
}

// The disk's load over `seconds` before the run (after run.settle_s), the
// probe not yet there; nullopt when not asked for, cancelled, or the
// counters could not be read.
std::optional<probes::LoadWindow> MeasureLoadBefore(const FileTree& procfs, const FileTree& sysfs,
                                                    const ProbeRun& run, double seconds) {
  if (seconds <= 0 || run.device == 0) return std::nullopt;
  if (!WaitUnlessCancelled(run, run.settle_s)) return std::nullopt;
  const ConditionsReading start = ReadConditions(procfs, sysfs, run.device);
  if (!WaitUnlessCancelled(run, seconds)) return std::nullopt;
  return ComputeLoadWindow(start, ReadConditions(procfs, sysfs, run.device));
}

}  // namespace

struct ThreadJobExecutor::Shared {
  Callback on_done;
  Options options;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<ProbeRun> queue;
  bool stopping = false;
  bool abandoned = false;  // Stop gave up on a worker: outcomes are dropped
  size_t workers_running = 0;
  size_t callbacks_running = 0;
  RunOverlap overlap;

  void Loop() {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [this] { return stopping || !queue.empty(); });
      if (queue.empty()) break;  // stopping
      const ProbeRun run = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      RunOutcome outcome = options.run(run, RunHost{options.policy, options.procfs, &overlap,
                                                    options.contention, options.abandoned});
      lock.lock();
      if (abandoned) continue;  // what called on_done may be gone
      ++callbacks_running;
      lock.unlock();
      on_done(run.id, std::move(outcome));
      lock.lock();
      --callbacks_running;
    }
    --workers_running;
    changed.notify_all();
  }
};

ThreadJobExecutor::ThreadJobExecutor(Callback on_done, Options options)
    : shared_(std::make_shared<Shared>()) {
  shared_->on_done = std::move(on_done);
  shared_->options = std::move(options);
  const uint32_t workers = std::max<uint32_t>(shared_->options.workers, 1);
  shared_->workers_running = workers;
  for (uint32_t i = 0; i < workers; ++i) {
    workers_.emplace_back([shared = shared_] {
      NameThisThread("probe");
      shared->Loop();
    });
  }
}

ThreadJobExecutor::~ThreadJobExecutor() { Stop(); }

void ThreadJobExecutor::Start(const ProbeRun& run) {
  {
    std::lock_guard lock(shared_->mutex);
    if (!shared_->stopping) {
      shared_->queue.push_back(run);
      shared_->changed.notify_all();
      return;
    }
  }
  shared_->on_done(run.id, RunOutcome::Of(RunResult::kCancelled, "shutting down"));
}

size_t ThreadJobExecutor::Stop() {
  std::deque<ProbeRun> dropped;
  {
    std::lock_guard lock(shared_->mutex);
    shared_->stopping = true;
    dropped.swap(shared_->queue);
    shared_->changed.notify_all();
  }
  for (const ProbeRun& run : dropped) {
    shared_->on_done(run.id, RunOutcome::Of(RunResult::kCancelled, "shutting down"));
  }
  size_t left = 0;
  {
    std::unique_lock lock(shared_->mutex);
    const bool all_ended = shared_->changed.wait_for(
        lock, shared_->options.stop_wait, [this] { return shared_->workers_running == 0; });
    if (!all_ended) {
      left = shared_->workers_running;
      shared_->abandoned = true;
      shared_->changed.wait(lock, [this] { return shared_->callbacks_running == 0; });
    }
  }
  for (std::thread& worker : workers_) {
    if (!worker.joinable() || worker.get_id() == std::this_thread::get_id()) continue;
    if (left == 0) {
      worker.join();
    } else {
      worker.detach();  // the stuck ones never return here; the others are ending
    }
  }
  workers_.clear();
  if (left > 0) {
    spdlog::error(
        "probes: {} run(s) still in I/O {} ms after shutdown began (a device that does "
        "not answer); left behind, their results dropped",
        left, shared_->options.stop_wait.count());
  }
  return left;
}

RunOverlap::Token RunOverlap::Begin() {
  std::lock_guard lock(mutex_);
  Token token{begun_, active_ > 0};
  ++active_;
  ++begun_;
  return token;
}

bool RunOverlap::End(Token token) {
  std::lock_guard lock(mutex_);
  --active_;
  return token.overlapped || begun_ != token.begun_before + 1;
}

RunOutcome ExecuteProbeRun(const ProbeRun& run, const RunHost& host) {
  const probes::TargetPolicy& policy = host.policy;
  const probes::JobSpec& spec = run.job.spec;
  const auto cancelled = [](int64_t start_unix_ms) {
    RunOutcome outcome = RunOutcome::Of(RunResult::kCancelled, "cancelled");
    outcome.start_unix_ms = start_unix_ms;
    return outcome;
  };
  if (run.cancel && run.cancel->cancelled()) return cancelled(WallUnixMs());
  probes::ProbeRunOptions options;
  options.policy = policy;
  options.create_directory = true;  // the job's directory is under the daemon's state dir
  options.run.cancel = run.cancel ? run.cancel->flag() : nullptr;
  options.run.hard_limit = run.job.timeout;
  if (host.abandoned != nullptr) {
    options.run.keep_abandoned = [&](std::unique_ptr<probes::HeldIo> held) {
      host.abandoned->Keep(run.device, std::move(held));
    };
  }
  const auto preparing_since = std::chrono::steady_clock::now();
  if (run.cancel) {
    run.cancel->Preparing();
    options.on_prepared = [&run, preparing_since](dev_t /*device*/) {
      run.cancel->Prepared(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - preparing_since)
              .count());
    };
  }
  // The device's counters when the measured phase starts and when the run
  // is over: the span of the run's conditions.
  const FileTree procfs(host.procfs);
  const FileTree sysfs(policy.sysfs);
  const std::optional<probes::LoadWindow> load_before =
      MeasureLoadBefore(procfs, sysfs, run, host.contention.before_seconds);
  if (run.cancel && run.cancel->cancelled()) return cancelled(WallUnixMs());
  std::optional<ConditionsReading> before;
  std::optional<RunOverlap::Token> overlap;
  options.run.on_measuring = [&] {
    before = ReadConditions(procfs, sysfs, run.device);
    if (host.overlap != nullptr) overlap = host.overlap->Begin();
  };
  auto probe = probes::RunProbe(spec, options);
  const bool other_probe = overlap && host.overlap->End(*overlap);
  if (run.cancel && run.cancel->preparing()) run.cancel->Prepared(0);  // refused before I/O
  if (!probe) return Failed(probe.error().ToString());

  RunOutcome outcome = OutcomeOf(*probe, run.job.timeout);
  if (before) {
    outcome.conditions =
        ComputeRunConditions(*before, ReadConditions(procfs, sysfs, run.device), probe->result,
                             MaxRequestBytes(sysfs, run.device), other_probe);
  }
  if (outcome.conditions) outcome.conditions->before = load_before;
  if (outcome.result == RunResult::kOk &&
      probes::Classify(outcome.conditions, host.contention).run_class ==
          probes::RunClass::kContended) {
    outcome.result = RunResult::kContended;
  }
  outcome.probe = std::move(probe->result);
  return outcome;
}

std::optional<DeviceId> ResolveProbeDevice(const probes::JobSpec& spec, const FileTree& sysfs) {
  std::filesystem::path path = spec.filename.empty() ? spec.TargetPath() : spec.filename;
  for (;;) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
      const DeviceId device = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
      const auto disk = collectors::FindWholeDisk(sysfs, major(device), minor(device));
      return disk ? MakeDeviceId(disk->major, disk->minor) : device;
    }
    if (!path.has_relative_path()) return std::nullopt;  // "/" itself failed
    const std::filesystem::path parent = path.parent_path();
    if (parent == path || parent.empty()) return std::nullopt;
    path = parent;
  }
}

}  // namespace iowatch::daemon
