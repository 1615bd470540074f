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

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/file_tree.h"
#include "daemon/scheduling/probe_scheduler.h"
#include "probes/target/probe_target.h"
#include "probes/verdicts/run_class.h"

namespace iowatch::daemon {

// Which runs measured while another probe run did (the executor's workers
// run several at once on different devices): a condition of each run.
// Thread-safety: every member may be called from any thread.
class RunOverlap {
 public:
  struct Token {
    uint64_t begun_before = 0;
    bool overlapped = false;
  };
  Token Begin();          // a run's measured phase starts
  bool End(Token token);  // it ends: whether another run measured meanwhile

 private:
  std::mutex mutex_;
  uint64_t active_ = 0;
  uint64_t begun_ = 0;
};

// What a run needs from the host besides its job: the target policy (and
// its sysfs root), procfs for the run's conditions, and the executor's
// overlap record (null: not tracked).
struct RunHost {
  probes::TargetPolicy policy;
  std::filesystem::path procfs = "/proc";
  RunOverlap* overlap = nullptr;
  // A completed run whose conditions this calls contended ends kContended.
  probes::ContentionPolicy contention;
  // Where a run's I/O abandoned to a hung device goes (null: leaked).
  AbandonedIoPool* abandoned = nullptr;
};

// One job run to the end on the calling thread: creates the job's directory
// (for a directory target), then PrepareTarget, MakeEngine and RunJob. The
// run's end maps to the outcome: completed → ok (contended when its
// conditions say so, host.contention); cancelled → cancelled;
// hard limit or a failed I/O → error (with the partial result); no result
// at all (target or engine refused) → error with the reason. The run's
// conditions (run_conditions.h) are measured over its measured phase on
// run.device, the whole disk.
RunOutcome ExecuteProbeRun(const ProbeRun& run, const RunHost& host);

class ThreadJobExecutor final : public JobExecutor {
 public:
  // `on_done(run_id, outcome)` is called once per started run; in the daemon
  // it calls ProbeScheduler::OnFinished and then asks for a Tick.
  using Callback = std::function<void(uint64_t run_id, RunOutcome outcome)>;
  // What a worker does with a run: ExecuteProbeRun (tests inject others).
  using RunFunction = std::function<RunOutcome(const ProbeRun&, const RunHost&)>;

  struct Options {
    probes::TargetPolicy policy;
    std::filesystem::path procfs = "/proc";
    // At least 1 run can go at once: with one, a second run the scheduler
    // started waited in the queue while its timeout clock ran, and was
    // written off as timed out (found by adversarial review).
    uint32_t workers = 1;
    // How long Stop waits for a running run: one blocked in a read the
    // device never answers (psync's pread in the kernel's uninterruptible
    // sleep, which no hard limit or signal ends) is left behind after it.
    std::chrono::milliseconds stop_wait{10'000};
    RunFunction run = ExecuteProbeRun;
    probes::ContentionPolicy contention{};
    AbandonedIoPool* abandoned = nullptr;  // RunHost::abandoned; must outlive the executor
  };

  ThreadJobExecutor(Callback on_done, Options options);
  explicit ThreadJobExecutor(Callback on_done) : ThreadJobExecutor(std::move(on_done), Options{}) {}
  ~ThreadJobExecutor() override;  // Stop()
  ThreadJobExecutor(const ThreadJobExecutor&) = delete;
  ThreadJobExecutor& operator=(const ThreadJobExecutor&) = delete;

  // Queues the run; returns at once.
  void Start(const ProbeRun& run) override;

  // Reports queued runs as cancelled, waits up to stop_wait for those running
  // (cancel their tokens first, ProbeScheduler::Shutdown, for a prompt end)
  // and joins the workers. A worker still running then is detached: it owns
  // what it uses, and its outcome is dropped (on_done is never called after
  // Stop returns). Later Starts are reported cancelled at once. Idempotent.
  // Returns the number of workers left behind.
  size_t Stop();

 private:
  struct Shared;  // the workers' state: owned by them too, so one can outlive this
  std::shared_ptr<Shared> shared_;
  std::vector<std::thread> workers_;
};

// The device a job's I/O lands on: the node's own device for a block device,
// else the st_dev of the target file, or of its nearest existing ancestor
// before the file exists. A partition is mapped to its whole disk through
// the sysfs walker (collectors/disk/block_devices.h), since production I/O on a
// sibling partition loads the same disk. nullopt when nothing on the path
// can be stat()ed.
std::optional<DeviceId> ResolveProbeDevice(const probes::JobSpec& spec, const FileTree& sysfs);

}  // namespace iowatch::daemon
