// The production side of the probe scheduler: ThreadJobExecutor runs probe
// jobs on its own worker threads, one per run the scheduler may have going
// at once (probes.max_concurrent; the scheduler keeps them on different
// devices), never on the io_context thread, so sampling and scrapes never
// wait for a probe. Each run goes exactly as
// `iowatch probe` does: PrepareTarget (create and fill the file once),
// MakeEngine, RunJob with the run's cancel token and the job's timeout as the
// hard limit. ResolveProbeDevice names the device a job's I/O lands on, for
// the scheduler's per-device exclusion and busy check.
// Thread-safety: Start and Stop may be called from any thread; the result
// callback runs on a worker thread, several at once when workers > 1 (or,
// for runs still queued at Stop, on the thread calling Stop).
#pragma once

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/file_tree.h"
#include "daemon/scheduling/probe_scheduler.h"
#include "probes/target/probe_target.h"

namespace iowatch::daemon {

class ThreadJobExecutor final : public JobExecutor {
 public:
  // `on_done(run_id, outcome)` is called once per started run; in the daemon
  // it calls ProbeScheduler::OnFinished and then asks for a Tick.
  using Callback = std::function<void(uint64_t run_id, RunOutcome outcome)>;

  // `workers` (at least 1) runs can go at once: with one, a second run the
  // scheduler started waited in the queue while its timeout clock ran, and
  // was written off as timed out (adversarial review finding 17).
  explicit ThreadJobExecutor(Callback on_done, probes::TargetPolicy policy = {},
                             uint32_t workers = 1);
  ~ThreadJobExecutor() override;  // Stop()
  ThreadJobExecutor(const ThreadJobExecutor&) = delete;
  ThreadJobExecutor& operator=(const ThreadJobExecutor&) = delete;

  // Queues the run; returns at once.
  void Start(const ProbeRun& run) override;

  // Reports queued runs as cancelled, waits for those running (cancel their
  // tokens first, ProbeScheduler::Shutdown, for a prompt end) and joins the
  // workers. Later Starts are reported cancelled at once. Idempotent.
  void Stop();

 private:
  void Loop();

  const Callback on_done_;
  const probes::TargetPolicy policy_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<ProbeRun> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;  // last: start once the members above exist
};

// One job run to the end on the calling thread: creates the job's directory
// (for a directory target), then PrepareTarget, MakeEngine and RunJob. The
// run's end maps to the outcome: completed → ok; cancelled → cancelled;
// hard limit or a failed I/O → error (with the partial result); no result
// at all (target or engine refused) → error with the reason.
RunOutcome ExecuteProbeRun(const ProbeRun& run, const probes::TargetPolicy& policy);

// The device a job's I/O lands on: the node's own device for a block device,
// else the st_dev of the target file, or of its nearest existing ancestor
// before the file exists. A partition is mapped to its whole disk through
// the sysfs walker (collectors/block_devices.h), since production I/O on a
// sibling partition loads the same disk. nullopt when nothing on the path
// can be stat()ed.
std::optional<DeviceId> ResolveProbeDevice(const probes::JobSpec& spec, const FileTree& sysfs);

}  // namespace iowatch::daemon
