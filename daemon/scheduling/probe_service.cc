#include "daemon/scheduling/probe_service.h"

#include <fmt/ranges.h>
#include <sys/sysmacros.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <cmath>
#include <random>

#include "collectors/cgroup/cgroup_io.h"
#include "common/clock.h"
#include "common/log.h"
#include "daemon/sampling/foreign_load.h"

namespace iowatch::daemon {
namespace {

using Clock = std::chrono::steady_clock;

// How long the event loop waits for a probe target's device (a stat() takes
// microseconds; one on a hung filesystem never returns).
constexpr std::chrono::milliseconds kMaxDeviceLookupWait{100};

Clock::time_point MonotonicTimePoint(double seconds) {
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)));
}

}  // namespace

std::unique_ptr<ProbeService> ProbeService::Start(const config::Config& config,
                                                  boost::asio::io_context& io,
                                                  prometheus::Registry& registry) {
  if (ScheduledJobsFrom(config.probes, config.state_dir).empty()) return nullptr;
  std::unique_ptr<ProbeService> service(new ProbeService(config, io, registry));
  service->Tick();
  return service;
}

ProbeService::ProbeService(const config::Config& config, boost::asio::io_context& io,
                           prometheus::Registry& registry)
    : io_(io), timer_(io), busy_(ToSeconds(config.probes.busy_window)), counters_(&registry) {
  std::vector<ScheduledJob> jobs = ScheduledJobsFrom(config.probes, config.state_dir);
  std::vector<std::string> names;
  names.reserve(jobs.size());
  for (const ScheduledJob& job : jobs) names.push_back(job.name);
  ProbeRecorderOptions options;
  options.state_dir = config.state_dir;
  options.baseline = config.probes.baseline;
  options.retention = config.probes.retention;
  options.sysfs = config.sysfs;
  options.counters = &counters_;
  const FileTree procfs(config.procfs);
  if (auto layout = collectors::DetectCgroupLayout(procfs, FileTree(config.sysfs))) {
    own_cgroup_ = collectors::OwnCgroup(procfs, layout->version);
  }
  options.name_foreign_load = [this](DeviceId disk) {
    std::shared_ptr<const Snapshot> latest;
    {
      std::lock_guard lock(latest_mutex_);
      latest = latest_;
    }
    return latest ? NameForeignLoad(*latest, major(disk), minor(disk), own_cgroup_) : "";
  };
  recorder_ = std::make_unique<ProbeRecorder>(std::move(options), names);
  StartScheduler(config, std::move(jobs));
  spdlog::info("probes: {} jobs scheduled, store in {}", names.size(), config.state_dir);
}

void ProbeService::StartScheduler(const config::Config& config, std::vector<ScheduledJob> jobs) {
  // On the worker: the outcome goes through the scheduler to the recorder
  // there (the store's fsync never delays the event loop); the next Tick (a
  // job may have waited for the device) runs on the loop.
  probes::TargetPolicy policy;
  policy.sysfs = config.sysfs;
  executor_ = std::make_unique<ThreadJobExecutor>(
      [this](uint64_t id, RunOutcome outcome) {
        scheduler_->OnFinished(id, std::move(outcome));
        boost::asio::post(io_, [this] { Tick(); });
      },
      ThreadJobExecutor::Options{.policy = policy,
                                 .procfs = config.procfs,
                                 .workers = SchedulerPolicyFrom(config.probes).max_concurrent,
                                 .contention = config.probes.baseline.contention,
                                 .abandoned = &abandoned_});
  ProbeScheduler::Dependencies deps;
  deps.clock = MonotonicSeconds;
  deps.seed = std::random_device{}();
  deps.busy = &busy_;
  deps.executor = executor_.get();
  deps.counters = &counters_;
  deps.abandoned = &abandoned_;
  // Off the event loop: a stat() on a hung filesystem would stop it.
  resolver_ = std::make_unique<AsyncDeviceResolver>(
      [sysfs = FileTree(config.sysfs)](const probes::JobSpec& spec) {
        return ResolveProbeDevice(spec, sysfs);
      },
      kMaxDeviceLookupWait);
  deps.resolve_device = [resolver = resolver_.get()](const probes::JobSpec& spec) {
    return resolver->Resolve(spec);
  };
  deps.on_outcome = [this](const ScheduledJob& job, const RunOutcome& outcome) {
    recorder_->Record(job, outcome);
  };
  scheduler_ = std::make_unique<ProbeScheduler>(std::move(jobs), SchedulerPolicyFrom(config.probes),
                                                std::move(deps));
}

ProbeService::~ProbeService() { Join(); }

void ProbeService::Confirm(DeviceId device) {
  if (stopping_ || scheduler_ == nullptr) return;
  constexpr double kConfirmEveryS = 3600;
  const std::vector<std::string> asked = scheduler_->Confirm(device, kConfirmEveryS);
  if (asked.empty()) return;
  spdlog::info("passive regression on {}:{}: probe {} brought forward to confirm it", major(device),
               minor(device), fmt::join(asked, ", "));
  Tick();
}

void ProbeService::Tick() {
  if (stopping_) return;
  const double next_s = scheduler_->Tick();
  if (!std::isfinite(next_s)) return;  // nothing due until a run reports (it posts a Tick)
  // A millisecond late, so that the clock has surely reached the time.
  timer_.expires_at(MonotonicTimePoint(next_s) + std::chrono::milliseconds(1));
  timer_.async_wait([this](const boost::system::error_code& error) {
    if (!error) Tick();
  });
}

// Every device of the sample is offered; the tracker keeps the watched ones.
void ProbeService::OnSample(std::shared_ptr<const Snapshot> latest) {
  // latest_ keeps it alive: only this thread replaces it.
  const Snapshot& snapshot = *latest;
  {
    std::lock_guard lock(latest_mutex_);
    latest_ = std::move(latest);
  }
  if (snapshot.block_devices != device_ids_for_) {
    device_ids_for_ = snapshot.block_devices;
    device_ids_.clear();
    for (const collectors::BlockDevice& b : *device_ids_for_) {
      device_ids_.emplace(b.name, MakeDeviceId(b.major, b.minor));
    }
  }
  abandoned_.Poll();  // frees what drained; keeps iowatch_probe_held_ios current
  const double now_s = MonotonicSeconds();
  for (const DeviceSnapshot& d : snapshot.devices) {
    const auto it = device_ids_.find(d.name);
    if (it != device_ids_.end()) busy_.Record(now_s, it->second, d.counters.io_ms);
  }
}

SchedulerStatus ProbeService::Scheduled() const { return scheduler_->Status(); }

std::shared_ptr<const ProbeSnapshot> ProbeService::Recorded() const {
  return recorder_->Snapshot();
}

void ProbeService::Shutdown() {
  stopping_ = true;
  timer_.cancel();
  scheduler_->Shutdown();
}

void ProbeService::Join() {
  if (executor_) executor_->Stop();
}

}  // namespace iowatch::daemon
