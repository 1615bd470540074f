// ThreadJobExecutor and ExecuteProbeRun with the null engine on a real file
// under /var/tmp (quick: no device I/O beyond creating a small file), the
// scheduler's shutdown through the real worker, and ResolveProbeDevice on a
// hand-made sysfs tree.
#include "daemon/scheduling/probe_executor.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <thread>

namespace iowatch::daemon {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class ProbeExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/var/tmp/iowatch-executor-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr) << "cannot create a directory under /var/tmp";
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // A null-engine job writing nothing: only PrepareTarget touches the disk.
  ProbeRun Run(uint64_t id, const std::string& runtime) const {
    ProbeRun run;
    run.id = id;
    run.job.name = "t";
    const std::vector<probes::JobOption> options = {
        {"name", "t"},        {"directory", (dir_ / "probes/sub").string()},
        {"size", "1M"},       {"rw", "randread"},
        {"ioengine", "null"}, {"runtime", runtime},
        {"time_based", "1"},  {"direct", "0"}};
    run.job.spec = probes::ParseJobOptions(options).value();
    run.job.timeout = milliseconds(60000);
    run.cancel = std::make_shared<CancelToken>();
    return run;
  }

  fs::path dir_;
};

TEST_F(ProbeExecutorTest, ExecuteRunsTheJobAndCreatesItsDirectory) {
  const RunOutcome outcome = ExecuteProbeRun(Run(1, "100ms"), {});
  ASSERT_EQ(outcome.result, RunResult::kOk) << outcome.error;
  ASSERT_TRUE(outcome.probe.has_value());
  EXPECT_GT(outcome.probe->read.ios, 0u);
  EXPECT_EQ(outcome.probe->end, probes::RunEnd::kCompleted);
  EXPECT_EQ(outcome.target_path, (dir_ / "probes/sub/t.0.0").string());
  struct stat st {};
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(outcome.target_device, st.st_dev);
  EXPECT_GT(outcome.start_unix_ms, 1'600'000'000'000);
}

TEST_F(ProbeExecutorTest, ACancelledTokenStopsBeforeAnyIo) {
  ProbeRun run = Run(1, "1s");
  run.cancel->Cancel();
  const RunOutcome outcome = ExecuteProbeRun(run, {});
  EXPECT_EQ(outcome.result, RunResult::kCancelled);
  EXPECT_FALSE(fs::exists(dir_ / "probes"));
}

// The disk's load is measured over contention.before_seconds, after the
// run's settle time, before any I/O of the run: a fixture disk whose
// counters do not move did nothing in it.
TEST_F(ProbeExecutorTest, TheLoadWindowPrecedesTheRunAfterItsSettleTime) {
  const fs::path sysfs = dir_ / "sys";
  fs::create_directories(sysfs / "dev/block/8:0");
  std::ofstream(sysfs / "dev/block/8:0/stat") << "100 0 800 50 0 0 0 0 0 40 50 0 0 0 0 0 0\n";
  RunHost host;
  host.policy.sysfs = sysfs;
  host.contention.before_seconds = 0.2;
  // The window, not the host: a wait for a CPU or the hypervisor's steal (CI
  // under ASan) would end the run contended rather than ok.
  host.contention.max_cpu_wait = 1;
  host.contention.max_cpu_steal = 1;
  ProbeRun run = Run(1, "50ms");
  run.device = MakeDeviceId(8, 0);
  run.settle_s = 0.1;
  const auto start = std::chrono::steady_clock::now();
  const RunOutcome outcome = ExecuteProbeRun(run, host);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(outcome.result, RunResult::kOk) << outcome.error;
  ASSERT_TRUE(outcome.conditions);
  ASSERT_TRUE(outcome.conditions->before);
  EXPECT_GE(outcome.conditions->before->seconds, 0.2);
  EXPECT_LT(outcome.conditions->before->seconds, 1.0);  // wide: a loaded test machine
  EXPECT_EQ(outcome.conditions->before->device_ios, 0u);
  EXPECT_GE(took, 0.35);  // settle + window + the 50 ms run
  // Window 0: not measured, no wait.
  host.contention.before_seconds = 0;
  const RunOutcome none = ExecuteProbeRun(run, host);
  ASSERT_TRUE(none.conditions);
  EXPECT_FALSE(none.conditions->before);
}

TEST_F(ProbeExecutorTest, ACancelDuringTheSettleTimeEndsTheRunAtOnce) {
  RunHost host;
  host.contention.before_seconds = 30;
  ProbeRun run = Run(1, "1s");
  run.device = MakeDeviceId(8, 0);
  run.settle_s = 30;
  std::thread canceller([token = run.cancel] {
    std::this_thread::sleep_for(milliseconds(100));
    token->Cancel();
  });
  const auto start = std::chrono::steady_clock::now();
  const RunOutcome outcome = ExecuteProbeRun(run, host);
  canceller.join();
  EXPECT_EQ(outcome.result, RunResult::kCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_FALSE(fs::exists(dir_ / "probes"));
}

TEST_F(ProbeExecutorTest, TargetErrorsAreErrorOutcomes) {
  ProbeRun run = Run(1, "1s");
  run.job.spec.directory = "/proc/iowatch-cannot-exist";
  const RunOutcome outcome = ExecuteProbeRun(run, {});
  EXPECT_EQ(outcome.result, RunResult::kError);
  EXPECT_NE(outcome.error.find("/proc/iowatch-cannot-exist"), std::string::npos) << outcome.error;
  EXPECT_FALSE(outcome.probe.has_value());
}

TEST_F(ProbeExecutorTest, WorkerReportsEachRunOnItsThread) {
  std::promise<std::pair<uint64_t, RunOutcome>> done;
  std::thread::id worker;
  ThreadJobExecutor executor([&](uint64_t id, RunOutcome outcome) {
    worker = std::this_thread::get_id();
    done.set_value({id, std::move(outcome)});
  });
  executor.Start(Run(7, "50ms"));
  auto result = done.get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  const auto [id, outcome] = result.get();
  EXPECT_EQ(id, 7u);
  EXPECT_EQ(outcome.result, RunResult::kOk) << outcome.error;
  EXPECT_NE(worker, std::this_thread::get_id());
}

// Adversarial review: with max_concurrent 2 the scheduler started
// two runs, but one worker ran them one after the other while the second's
// timeout ran. Two workers run them at once: each run's start lies before
// the other's end.
TEST_F(ProbeExecutorTest, TwoWorkersRunTwoProbesAtOnce) {
  std::mutex mutex;
  std::vector<RunOutcome> outcomes;
  std::promise<void> both;
  ThreadJobExecutor executor(
      [&](uint64_t, RunOutcome outcome) {
        std::lock_guard lock(mutex);
        outcomes.push_back(std::move(outcome));
        if (outcomes.size() == 2) both.set_value();
      },
      ThreadJobExecutor::Options{.policy = {}, .workers = 2});
  ProbeRun first = Run(1, "400ms");
  ProbeRun second = Run(2, "400ms");
  second.job.spec.directory = (dir_ / "probes/other").string();
  executor.Start(first);
  executor.Start(second);
  ASSERT_EQ(both.get_future().wait_for(std::chrono::seconds(20)), std::future_status::ready);
  ASSERT_EQ(outcomes[0].result, RunResult::kOk) << outcomes[0].error;
  ASSERT_EQ(outcomes[1].result, RunResult::kOk) << outcomes[1].error;
  const auto end_ms = [](const RunOutcome& o) {
    return o.start_unix_ms + std::chrono::duration_cast<milliseconds>(o.probe->elapsed).count();
  };
  EXPECT_LT(outcomes[0].start_unix_ms, end_ms(outcomes[1]));
  EXPECT_LT(outcomes[1].start_unix_ms, end_ms(outcomes[0]));
}

// Shutdown mid-probe through the real worker: the run ends as "cancelled"
// well within the 2 s the daemon has to exit.
TEST_F(ProbeExecutorTest, SchedulerShutdownCancelsARunningProbePromptly) {
  std::promise<RunResult> finished;
  std::promise<void> started;
  ProbeScheduler* scheduler_ptr = nullptr;
  ThreadJobExecutor executor([&](uint64_t id, RunOutcome outcome) {
    const RunResult result = outcome.result;
    scheduler_ptr->OnFinished(id, std::move(outcome));
    finished.set_value(result);
  });
  ProbeScheduler::Dependencies deps;
  const auto t0 = std::chrono::steady_clock::now();
  deps.clock = [t0] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  deps.executor = &executor;
  std::vector<RunOutcome> sunk;
  deps.on_outcome = [&](const ScheduledJob&, const RunOutcome& o) { sunk.push_back(o); };
  ScheduledJob job = Run(0, "30s").job;  // far longer than the test
  job.every = milliseconds(3600 * 1000);
  job.jitter = milliseconds(0);
  ProbeScheduler scheduler({job}, SchedulerPolicy{}, std::move(deps));
  scheduler_ptr = &scheduler;
  scheduler.Tick();
  ASSERT_TRUE(scheduler.Status().jobs[0].running);
  std::this_thread::sleep_for(milliseconds(300));  // the file is made, the run is going

  const auto stop = std::chrono::steady_clock::now();
  scheduler.Shutdown();
  auto result = finished.get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(2)), std::future_status::ready);
  executor.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stop, std::chrono::seconds(2));
  EXPECT_EQ(result.get(), RunResult::kCancelled);
  EXPECT_EQ(scheduler.Status().jobs[0].runs.cancelled, 1u);
  ASSERT_EQ(sunk.size(), 1u);
  EXPECT_EQ(sunk[0].result, RunResult::kCancelled);
}

TEST_F(ProbeExecutorTest, StopReportsQueuedRunsCancelled) {
  std::vector<std::pair<uint64_t, RunResult>> reports;
  std::mutex mutex;
  {
    ThreadJobExecutor executor([&](uint64_t id, RunOutcome outcome) {
      std::lock_guard lock(mutex);
      reports.emplace_back(id, outcome.result);
    });
    ProbeRun first = Run(1, "300ms");
    executor.Start(first);
    executor.Start(Run(2, "300ms"));
    executor.Start(Run(3, "300ms"));
    executor.Stop();
    executor.Start(Run(4, "300ms"));  // after Stop: at once
  }
  std::lock_guard lock(mutex);
  ASSERT_EQ(reports.size(), 4u);
  size_t cancelled = 0;
  for (const auto& [id, result] : reports) cancelled += result == RunResult::kCancelled;
  EXPECT_GE(cancelled, 2u);  // 2 and 3 were queued (1 may or may not have begun)
  EXPECT_EQ(reports.back(), std::make_pair(uint64_t{4}, RunResult::kCancelled));
}

// A run stuck in a read the device never answers (psync's pread in the
// kernel's uninterruptible sleep ignores the hard limit and every signal):
// Stop gives up on it after stop_wait, so shutdown ends, and its late outcome
// reaches nobody (the scheduler it would report to is gone by then).
TEST_F(ProbeExecutorTest, StopLeavesARunStuckInIoBehind) {
  auto release = std::make_shared<std::promise<void>>();
  std::shared_future<void> released = release->get_future().share();
  auto started = std::make_shared<std::promise<void>>();
  std::atomic<int> reported = 0;
  {
    ThreadJobExecutor executor(
        [&](uint64_t, RunOutcome) { ++reported; },
        ThreadJobExecutor::Options{.policy = {},
                                   .workers = 1,
                                   .stop_wait = std::chrono::milliseconds(200),
                                   .run = [released, started](const ProbeRun&, const RunHost&) {
                                     started->set_value();
                                     released.wait();  // the hung pread
                                     return RunOutcome::Of(RunResult::kOk, "");
                                   }});
    executor.Start(Run(1, "300ms"));
    started->get_future().wait();
    const auto stop = std::chrono::steady_clock::now();
    EXPECT_EQ(executor.Stop(), 1u);
    EXPECT_LT(std::chrono::steady_clock::now() - stop, std::chrono::seconds(3));
  }
  release->set_value();  // the device answers at last: the worker ends on its own
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(reported.load(), 0);
}

TEST_F(ProbeExecutorTest, DeviceOfAFileNotYetCreatedIsItsDirectorysDevice) {
  struct stat st {};
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  probes::JobSpec spec;
  spec.name = "x";
  spec.directory = (dir_ / "not/yet").string();
  const FileTree no_sysfs(dir_ / "no-sysfs");
  EXPECT_EQ(ResolveProbeDevice(spec, no_sysfs), st.st_dev);
  spec.directory.clear();
  spec.filename = (dir_ / "file.bin").string();
  EXPECT_EQ(ResolveProbeDevice(spec, no_sysfs), st.st_dev);
  // Targets are absolute once resolved against the state dir; a relative
  // path with nothing to stat is unknown rather than the cwd's device.
  spec.filename = "iowatch-no-such-relative-dir/x";
  EXPECT_FALSE(ResolveProbeDevice(spec, no_sysfs).has_value());
}

TEST_F(ProbeExecutorTest, APartitionIsMappedToItsWholeDisk) {
  struct stat st {};
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  // <sysfs>/block/disk (8:0) with its partition disk1, whose dev is st_dev.
  const fs::path sysfs = dir_ / "sys";
  fs::create_directories(sysfs / "block/disk/disk1");
  std::ofstream(sysfs / "block/disk/dev") << "8:0\n";
  std::ofstream(sysfs / "block/disk/disk1/partition") << "1\n";
  std::ofstream(sysfs / "block/disk/disk1/dev") << FormatDevice(st.st_dev) << "\n";
  probes::JobSpec spec;
  spec.name = "x";
  spec.directory = dir_.string();
  EXPECT_EQ(ResolveProbeDevice(spec, FileTree(sysfs)), MakeDeviceId(8, 0));
  // Not a partition: the device itself.
  fs::remove(sysfs / "block/disk/disk1/partition");
  EXPECT_EQ(ResolveProbeDevice(spec, FileTree(sysfs)), st.st_dev);
}

}  // namespace
}  // namespace iowatch::daemon
