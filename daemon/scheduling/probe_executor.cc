#include "daemon/scheduling/probe_executor.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <chrono>
#include <system_error>

#include "collectors/block_devices.h"
#include "common/clock.h"
#include "probes/run_probe.h"

namespace iowatch::daemon {
namespace {

RunOutcome Failed(std::string error) { return RunOutcome::Of(RunResult::kError, std::move(error)); }

}  // namespace

ThreadJobExecutor::ThreadJobExecutor(Callback on_done, probes::TargetPolicy policy,
                                     uint32_t workers)
    : on_done_(std::move(on_done)), policy_(policy) {
  for (uint32_t i = 0; i < std::max<uint32_t>(workers, 1); ++i) {
    workers_.emplace_back([this] { Loop(); });
  }
}

ThreadJobExecutor::~ThreadJobExecutor() { Stop(); }

void ThreadJobExecutor::Start(const ProbeRun& run) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      queue_.push_back(run);
      wake_.notify_one();
      return;
    }
  }
  on_done_(run.id, RunOutcome::Of(RunResult::kCancelled, "shutting down"));
}

void ThreadJobExecutor::Stop() {
  std::deque<ProbeRun> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    dropped.swap(queue_);
    wake_.notify_all();
  }
  for (const ProbeRun& run : dropped) {
    on_done_(run.id, RunOutcome::Of(RunResult::kCancelled, "shutting down"));
  }
  for (std::thread& worker : workers_) {
    if (worker.joinable() && worker.get_id() != std::this_thread::get_id()) worker.join();
  }
}

void ThreadJobExecutor::Loop() {
  for (;;) {
    ProbeRun run;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      run = std::move(queue_.front());
      queue_.pop_front();
    }
    on_done_(run.id, ExecuteProbeRun(run, policy_));
  }
}

RunOutcome ExecuteProbeRun(const ProbeRun& run, const probes::TargetPolicy& policy) {
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
  auto probe = probes::RunProbe(spec, options);
  if (!probe) return Failed(probe.error().ToString());

  RunOutcome outcome;
  outcome.target_device = probe->device;
  outcome.target_path = probe->target_path;
  outcome.start_unix_ms = probe->start_unix_ms;
  const probes::ProbeResult& result = probe->result;
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
      outcome.error =
          fmt::format("timed out: stopped by the {} s limit", ToSeconds(run.job.timeout));
      break;
    case probes::RunEnd::kFailed:
      outcome.result = RunResult::kError;
      outcome.error = result.error ? result.error->ToString() : "I/O error";
      break;
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
