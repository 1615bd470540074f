// ProbeService: the scheduled probes inside `iowatch serve`, wired together:
// a DeviceBusyTracker fed from every sample, the ProbeScheduler ticked by a
// timer on the event loop (at the time each Tick asks for, and again after
// every finished run), a ThreadJobExecutor running the jobs on its worker
// thread, and the ProbeRecorder taking every outcome to the store, the
// baselines and the snapshot that /metrics renders.
//
// Shutdown: Shutdown() (on the event loop) cancels the running probe and
// starts no more; Join() (after the loop has stopped) waits for the worker,
// which the cancellation ends within moments.
// Thread-safety: every member on the event loop thread, except Join (after
// it stops); the worker only calls the scheduler and the recorder, which
// lock, and posts Ticks to the loop.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/scheduling/async_device_resolver.h"
#include "daemon/scheduling/device_busy.h"
#include "daemon/scheduling/probe_counters.h"
#include "daemon/scheduling/probe_executor.h"
#include "daemon/scheduling/probe_recorder.h"
#include "daemon/scheduling/probe_scheduler.h"

namespace iowatch::daemon {

class ProbeService {
 public:
  // Null when probes are disabled or no job is configured. Runs the first
  // Tick: jobs due at start go to the worker at once.
  // Runs and store errors are counted in `registry` (probe_counters.h),
  // which must outlive the service.
  static std::unique_ptr<ProbeService> Start(const config::Config& config,
                                             boost::asio::io_context& io,
                                             prometheus::Registry& registry);
  ~ProbeService();  // Join()
  ProbeService(const ProbeService&) = delete;
  ProbeService& operator=(const ProbeService&) = delete;

  // Feeds the busy tracker with the sample's io_ticks, and keeps the sample
  // for naming who loaded a disk during a contended run.
  void OnSample(std::shared_ptr<const Snapshot> snapshot);
  // The scheduler's run and skip counts and running gauges, as of now.
  SchedulerStatus Scheduled() const;
  // What the recorder published last, for the status page.
  std::shared_ptr<const ProbeSnapshot> Recorded() const;
  // The daemon's own cgroup (its I/O is the probes'), "" when unknown.
  const std::string& OwnCgroup() const { return own_cgroup_; }
  // A passive regression on the whole disk `device`: its jobs run once to
  // confirm it, at most once an hour each (ProbeScheduler::Confirm).
  void Confirm(DeviceId device);
  void Shutdown();
  void Join();

 private:
  ProbeService(const config::Config& config, boost::asio::io_context& io,
               prometheus::Registry& registry);
  void Tick();
  // The executor, the device resolver and the scheduler over `jobs`.
  void StartScheduler(const config::Config& config, std::vector<ScheduledJob> jobs);

  boost::asio::io_context& io_;
  boost::asio::steady_timer timer_;
  bool stopping_ = false;
  DeviceBusyTracker busy_;
  ProbeCounters counters_;
  AbandonedIoPool abandoned_{&counters_};  // outlives the scheduler and executor using it
  std::unique_ptr<ProbeRecorder> recorder_;
  std::unique_ptr<AsyncDeviceResolver> resolver_;  // before the scheduler that calls it
  std::unique_ptr<ProbeScheduler> scheduler_;
  // Last: destroyed (its worker joined) before what the worker uses.
  std::unique_ptr<ThreadJobExecutor> executor_;
  std::shared_ptr<const std::vector<collectors::BlockDevice>> device_ids_for_;
  std::unordered_map<std::string, DeviceId> device_ids_;
  // The latest sample and iowatch's own cgroup, read by the recording thread
  // (NameForeignLoad) under the mutex.
  mutable std::mutex latest_mutex_;
  std::shared_ptr<const Snapshot> latest_;
  std::string own_cgroup_;
};

}  // namespace iowatch::daemon
