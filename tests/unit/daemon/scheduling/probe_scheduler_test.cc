// ProbeScheduler driven tick by tick: a fake clock, a fake executor that
// records what it was asked to run, a fake busy source (and the real
// DeviceBusyTracker for the "our own I/O" case). No threads, no sleeping.
#include "daemon/scheduling/probe_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "tests/unit/daemon/scheduling/test_devices.h"

namespace iowatch::daemon {
namespace {

using std::chrono::milliseconds;

using testing::kNvme;
using testing::kSda;
const DeviceId kSdb = MakeDeviceId(8, 16);

milliseconds Ms(double seconds) { return milliseconds(std::llround(seconds * 1000)); }

ScheduledJob MakeJob(const std::string& name, double every_s, double jitter_s = 0,
                     double timeout_s = 60) {
  ScheduledJob job;
  job.name = name;
  job.spec.name = name;
  job.spec.directory = "/probes";
  job.every = Ms(every_s);
  job.jitter = Ms(jitter_s);
  job.timeout = Ms(timeout_s);
  return job;
}

class FakeExecutor final : public JobExecutor {
 public:
  void Start(const ProbeRun& run) override {
    runs.push_back(run);
    if (finish_at_once) scheduler->OnFinished(run.id, RunOutcome::Of(RunResult::kOk));
  }
  std::vector<ProbeRun> runs;
  ProbeScheduler* scheduler = nullptr;
  bool finish_at_once = false;  // report from inside Start, as the contract allows
};

class FakeBusy final : public BusySource {
 public:
  void Watch(DeviceId device) override { watched.insert(device); }
  std::optional<double> Utilization(DeviceId device, double window_s, double /*now_s*/,
                                    std::span<const TimeSpan> exclude) const override {
    last_window_s = window_s;
    last_exclude.assign(exclude.begin(), exclude.end());
    const auto it = utilization.find(device);
    return it == utilization.end() ? std::nullopt : it->second;
  }
  std::map<DeviceId, std::optional<double>> utilization;
  std::set<DeviceId> watched;
  mutable double last_window_s = 0;
  mutable std::vector<TimeSpan> last_exclude;
};

// A scheduler with fakes around it; jobs are placed on devices by name.
struct Harness {
  double now = 0;
  FakeExecutor executor;
  FakeBusy busy;
  std::map<std::string, DeviceId> device_of;
  std::vector<std::pair<std::string, RunOutcome>> outcomes;
  std::unique_ptr<ProbeScheduler> scheduler;

  AbandonedIoPool abandoned;
  void Make(std::vector<ScheduledJob> jobs, SchedulerPolicy policy, uint64_t seed = 42,
            BusySource* busy_source = nullptr) {
    ProbeScheduler::Dependencies deps;
    deps.abandoned = &abandoned;
    deps.clock = [this] { return now; };
    deps.seed = seed;
    deps.busy = busy_source != nullptr ? busy_source : &busy;
    deps.executor = &executor;
    deps.resolve_device = [this](const probes::JobSpec& spec) -> std::optional<DeviceId> {
      const auto it = device_of.find(spec.name);
      if (it == device_of.end()) return std::nullopt;
      return it->second;
    };
    deps.on_outcome = [this](const ScheduledJob& job, const RunOutcome& outcome) {
      outcomes.emplace_back(job.name, outcome);
    };
    scheduler = std::make_unique<ProbeScheduler>(std::move(jobs), policy, std::move(deps));
    executor.scheduler = scheduler.get();
  }
  double TickAt(double t) {
    now = t;
    return scheduler->Tick();
  }
  bool Finish(const ProbeRun& run, RunResult result = RunResult::kOk) {
    return scheduler->OnFinished(run.id, RunOutcome::Of(result));
  }
  JobStatus Job(const std::string& name) const {
    for (const JobStatus& job : scheduler->Status().jobs) {
      if (job.name == name) return job;
    }
    ADD_FAILURE() << "no job " << name;
    return {};
  }
  std::vector<std::string> RunNames() const {
    std::vector<std::string> names;
    for (const ProbeRun& run : executor.runs) names.push_back(run.job.name);
    return names;
  }
};

SchedulerPolicy Policy(uint32_t max_concurrent = 1) {
  SchedulerPolicy policy;
  policy.max_concurrent = max_concurrent;
  return policy;
}

TEST(ProbeScheduler, FirstRunsAreSpreadOverTheJitter) {
  Harness h;
  std::vector<ScheduledJob> jobs;
  for (int i = 0; i < 20; ++i) {
    const std::string name = "job" + std::to_string(i);
    jobs.push_back(MakeJob(name, 900, 60));
    h.device_of[name] = MakeDeviceId(8, static_cast<uint32_t>(16 * i));
  }
  h.executor.finish_at_once = true;
  h.Make(std::move(jobs), Policy(20));
  std::vector<double> starts;
  for (double t = 0; t <= 61; t += 0.5) {
    const size_t before = h.executor.runs.size();
    h.TickAt(t);
    for (size_t i = before; i < h.executor.runs.size(); ++i) starts.push_back(t);
  }
  ASSERT_EQ(starts.size(), 20u);  // each exactly once within [0, jitter]
  EXPECT_GT(std::ranges::max(starts) - std::ranges::min(starts), 30);
  EXPECT_LT(std::ranges::count(starts, 0.0), 3) << "not all at once";
}

TEST(ProbeScheduler, PeriodAndJitterStayWithinBounds) {
  Harness h;
  h.device_of["a"] = kSda;
  h.executor.finish_at_once = true;
  h.Make({MakeJob("a", 100, 10)}, Policy(), 7);
  // Event-driven: jump to the time Tick asks for, so starts are exact.
  std::vector<double> starts;
  double next = h.TickAt(0);
  while (h.executor.runs.size() < 2000) {
    ASSERT_TRUE(std::isfinite(next));
    const size_t before = h.executor.runs.size();
    next = h.TickAt(next);
    if (h.executor.runs.size() > before) starts.push_back(h.now);
  }
  std::vector<double> gaps;
  for (size_t i = 1; i < starts.size(); ++i) gaps.push_back(starts[i] - starts[i - 1]);
  EXPECT_GE(std::ranges::min(gaps), 90);
  EXPECT_LE(std::ranges::max(gaps), 110);
  EXPECT_LT(std::ranges::min(gaps), 91) << "the jitter's range is used";
  EXPECT_GT(std::ranges::max(gaps), 109);
  double sum = 0;
  for (double gap : gaps) sum += gap;
  EXPECT_NEAR(sum / static_cast<double>(gaps.size()), 100, 0.5);  // no drift
  EXPECT_EQ(h.Job("a").runs.ok, 2000u);
}

TEST(ProbeScheduler, SameSeedSameSchedule) {
  std::vector<double> first[2];
  for (auto& starts : first) {
    Harness h;
    h.executor.finish_at_once = true;
    h.Make({MakeJob("a", 100, 10), MakeJob("b", 100, 10)}, Policy(2), 1234);
    double next = h.TickAt(0);
    for (int i = 0; i < 50; ++i) {
      const size_t before = h.executor.runs.size();
      next = h.TickAt(next);
      if (h.executor.runs.size() > before) starts.push_back(h.now);
    }
  }
  EXPECT_EQ(first[0], first[1]);
}

// A passive regression asks the disk's jobs to run now, once an hour at
// most; the regular slots after are kept, other disks' jobs are not asked.
TEST(ProbeScheduler, APassiveRegressionAsksTheDisksJobsOneRunPerHour) {
  Harness h;
  h.device_of["a"] = kSda;
  h.device_of["other"] = MakeDeviceId(8, 16);
  h.executor.finish_at_once = true;
  h.Make({MakeJob("a", 900), MakeJob("other", 900)}, Policy(2));
  h.TickAt(0);  // both run at their first slot
  ASSERT_EQ(h.executor.runs.size(), 2u);
  h.now = 100;
  EXPECT_EQ(h.scheduler->Confirm(kSda, 3600), std::vector<std::string>{"a"});
  h.TickAt(100);
  ASSERT_EQ(h.RunNames(), (std::vector<std::string>{"a", "other", "a"}));
  h.now = 200;
  EXPECT_TRUE(h.scheduler->Confirm(kSda, 3600).empty()) << "asked within the hour";
  // The regular slot (900) still comes.
  const double next = h.TickAt(200);
  EXPECT_DOUBLE_EQ(next, 900);
  h.TickAt(900);
  EXPECT_EQ(h.RunNames(), (std::vector<std::string>{"a", "other", "a", "a", "other"}));
  for (double t = 1800; t <= 3600; t += 900) h.TickAt(t);
  h.now = 3750;  // an hour after the last ask, between two slots
  EXPECT_EQ(h.scheduler->Confirm(kSda, 3600), std::vector<std::string>{"a"});
}

TEST(ProbeScheduler, JobsOnOneDeviceNeverOverlap) {
  Harness h;
  for (const char* name : {"a", "b", "c"}) h.device_of[name] = kSda;
  h.Make({MakeJob("a", 900), MakeJob("b", 900), MakeJob("c", 900)}, Policy(3));
  h.TickAt(0);  // all three due at once (no jitter)
  ASSERT_EQ(h.RunNames(), std::vector<std::string>{"a"});
  h.TickAt(5);
  EXPECT_EQ(h.executor.runs.size(), 1u) << "b and c wait for the device";
  EXPECT_TRUE(h.Finish(h.executor.runs[0]));
  h.TickAt(5);
  ASSERT_EQ(h.RunNames(), (std::vector<std::string>{"a", "b"}));
  h.Finish(h.executor.runs[1]);
  h.TickAt(9);
  EXPECT_EQ(h.RunNames(), (std::vector<std::string>{"a", "b", "c"}));
  for (const char* name : {"b", "c"}) {
    EXPECT_TRUE(h.Job(name).skips.empty()) << "waiting for a device is not a skip";
  }
}

TEST(ProbeScheduler, ARunRightAfterAnotherOnItsDeviceSettlesBeforeItsLoadWindow) {
  Harness h;
  for (const char* name : {"a", "b", "c"}) h.device_of[name] = kSda;
  h.device_of["d"] = kSdb;
  h.Make({MakeJob("a", 900), MakeJob("b", 900), MakeJob("c", 900), MakeJob("d", 900)}, Policy(3));
  h.TickAt(0);
  ASSERT_EQ(h.RunNames(), (std::vector<std::string>{"a", "d"}));
  EXPECT_EQ(h.executor.runs[0].settle_s, 0);  // no run before it on sda
  EXPECT_EQ(h.executor.runs[1].settle_s, 0);
  h.TickAt(5);
  h.Finish(h.executor.runs[0]);
  h.TickAt(5);  // b starts as a ends: the whole second
  ASSERT_EQ(h.RunNames(), (std::vector<std::string>{"a", "d", "b"}));
  EXPECT_DOUBLE_EQ(h.executor.runs[2].settle_s, 1);
  h.TickAt(8.75);
  h.Finish(h.executor.runs[2]);
  h.TickAt(9);  // c starts 0.25 s after b ended: the rest of the second
  ASSERT_EQ(h.RunNames(), (std::vector<std::string>{"a", "d", "b", "c"}));
  EXPECT_DOUBLE_EQ(h.executor.runs[3].settle_s, 0.75);
}

TEST(ProbeScheduler, JobsOnDifferentDevicesMayRunTogetherUpToTheLimit) {
  Harness h;
  h.device_of = {{"a", kSda}, {"b", kSdb}, {"c", kNvme}};
  h.Make({MakeJob("a", 900), MakeJob("b", 900), MakeJob("c", 900)}, Policy(2));
  h.TickAt(0);
  ASSERT_EQ(h.RunNames(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(h.scheduler->Status().running, 2u);
  h.Finish(h.executor.runs[1]);
  h.TickAt(3);
  EXPECT_EQ(h.RunNames(), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(ProbeScheduler, GlobalLimitOfOneSerialisesEveryDevice) {
  Harness h;
  h.device_of = {{"a", kSda}, {"b", kNvme}};
  h.Make({MakeJob("a", 900), MakeJob("b", 900)}, Policy(1));
  h.TickAt(0);
  h.TickAt(1);
  ASSERT_EQ(h.RunNames(), std::vector<std::string>{"a"});
  h.Finish(h.executor.runs[0]);
  h.TickAt(4);
  EXPECT_EQ(h.RunNames(), (std::vector<std::string>{"a", "b"}));
}

TEST(ProbeScheduler, BusyDeviceIsSkippedAndRetried) {
  Harness h;
  h.device_of["a"] = kSda;
  h.busy.utilization[kSda] = 0.9;
  h.Make({MakeJob("a", 900)}, Policy());
  EXPECT_EQ(h.TickAt(0), 60) << "the retry is the next thing to do";
  EXPECT_TRUE(h.executor.runs.empty());
  EXPECT_EQ(h.Job("a").skips.at("busy"), 1u);
  EXPECT_EQ(h.busy.last_window_s, 60);
  EXPECT_TRUE(h.busy.watched.contains(kSda));
  h.TickAt(59);
  EXPECT_EQ(h.Job("a").skips.at("busy"), 1u) << "nothing before the retry time";
  h.busy.utilization[kSda] = 0.2;
  h.TickAt(60);
  ASSERT_EQ(h.executor.runs.size(), 1u);
  EXPECT_EQ(h.Job("a").runs.skipped, 0u);
  EXPECT_TRUE(h.outcomes.empty());
}

TEST(ProbeScheduler, AtTheThresholdIsNotBusy) {
  Harness h;
  h.device_of["a"] = kSda;
  h.busy.utilization[kSda] = 0.5;
  h.Make({MakeJob("a", 900)}, Policy());
  h.TickAt(0);
  EXPECT_EQ(h.executor.runs.size(), 1u);
}

TEST(ProbeScheduler, MaxSkipsGivesTheSlotUpUntilTheNextOne) {
  Harness h;
  h.device_of["a"] = kSda;
  h.busy.utilization[kSda] = 1.0;
  SchedulerPolicy policy = Policy();
  policy.max_skips = 3;
  h.Make({MakeJob("a", 900)}, policy);
  h.TickAt(0);
  h.TickAt(60);
  EXPECT_EQ(h.Job("a").runs.skipped, 0u);
  const double next = h.TickAt(120);  // third skip: given up
  EXPECT_EQ(next, 900) << "waits for the next regular slot";
  const JobStatus status = h.Job("a");
  EXPECT_EQ(status.skips.at("busy"), 3u);
  EXPECT_EQ(status.runs.skipped, 1u);
  EXPECT_EQ(status.last_result, RunResult::kSkipped);
  ASSERT_EQ(h.outcomes.size(), 1u);
  EXPECT_EQ(h.outcomes[0].second.result, RunResult::kSkipped);
  EXPECT_EQ(h.outcomes[0].second.error, "busy: 8:0 was 100% utilised (threshold 50%)");
  h.TickAt(180);
  h.TickAt(899);
  EXPECT_EQ(h.Job("a").skips.at("busy"), 3u);
  h.busy.utilization[kSda] = 0.1;
  h.TickAt(900);
  EXPECT_EQ(h.executor.runs.size(), 1u);
  // A new slot starts a new count.
  h.Finish(h.executor.runs[0]);
  h.busy.utilization[kSda] = 1.0;
  h.TickAt(1800);
  h.TickAt(1860);
  EXPECT_EQ(h.Job("a").runs.skipped, 1u);
}

TEST(ProbeScheduler, SlotIsGivenUpWhenTheRetryWouldReachTheNextSlot) {
  Harness h;
  h.device_of["a"] = kSda;
  h.busy.utilization[kSda] = 0.8;
  h.Make({MakeJob("a", 100)}, Policy());  // retry 60 s, max_skips 10
  h.TickAt(0);
  EXPECT_EQ(h.TickAt(60), 100);  // 120 would pass the slot at 100
  EXPECT_EQ(h.Job("a").skips.at("busy"), 2u);
  EXPECT_EQ(h.Job("a").runs.skipped, 1u);
}

TEST(ProbeScheduler, UnknownUtilisationIsNotBusy) {
  Harness h;
  h.device_of["a"] = kSda;  // FakeBusy knows nothing of it
  h.Make({MakeJob("a", 900)}, Policy());
  h.TickAt(0);
  EXPECT_EQ(h.executor.runs.size(), 1u);
  EXPECT_TRUE(h.Job("a").skips.empty());
}

TEST(ProbeScheduler, UnresolvedDeviceRunsWithoutBusyCheck) {
  Harness h;  // no device for "a"
  h.busy.utilization[0] = 1.0;
  h.Make({MakeJob("a", 900)}, Policy());
  h.TickAt(0);
  ASSERT_EQ(h.executor.runs.size(), 1u);
  EXPECT_EQ(h.executor.runs[0].device, 0u);
  EXPECT_FALSE(h.Job("a").device.has_value());
  EXPECT_TRUE(h.scheduler->Status().devices.empty());
}

TEST(ProbeScheduler, ADeviceThatChangesIsWatchedAgain) {
  Harness h;
  h.device_of["a"] = kSda;
  h.executor.finish_at_once = true;
  h.Make({MakeJob("a", 100)}, Policy());
  h.TickAt(0);
  h.device_of["a"] = kNvme;  // remounted elsewhere
  h.TickAt(100);
  EXPECT_TRUE(h.busy.watched.contains(kNvme));
  EXPECT_EQ(h.executor.runs.back().device, kNvme);
  EXPECT_EQ(h.Job("a").device, kNvme);
}

TEST(ProbeScheduler, OwnRunsArePassedAsExclusions) {
  Harness h;
  h.device_of = {{"a", kSda}, {"b", kSda}};
  h.busy.utilization[kSda] = 0.1;
  h.Make({MakeJob("a", 900), MakeJob("b", 900)}, Policy());
  h.TickAt(0);
  h.now = 20;
  h.Finish(h.executor.runs[0]);
  h.TickAt(20);
  ASSERT_EQ(h.busy.last_exclude.size(), 1u);
  EXPECT_EQ(h.busy.last_exclude[0].start_s, 0);
  EXPECT_EQ(h.busy.last_exclude[0].end_s, 21);  // the run plus 1 s
}

// The pitfall of DESIGN.md §6 end to end with the real tracker: a probe's
// own I/O must not make the next probe skip; the same load from elsewhere must.
TEST(ProbeScheduler, BusyCheckDoesNotCountTheSchedulersOwnProbes) {
  for (const bool ours : {true, false}) {
    Harness h;
    DeviceBusyTracker tracker(60);
    h.device_of["a"] = kSda;
    SchedulerPolicy policy = Policy();
    policy.busy_threshold = 0.3;
    h.Make({MakeJob("a", 60, 0, 30)}, policy, 42, &tracker);
    uint64_t ticks = 0;
    for (int t = 0; t <= 60; ++t) {
      h.TickAt(t);  // runs at 0 (nothing known yet): for 20 s, or done at once
      if (t == (ours ? 20 : 0)) h.Finish(h.executor.runs.at(0));
      tracker.Record(t, kSda, ticks);
      ticks += t < 20 ? 1000 : 100;  // 100 % busy for 20 s, then 10 %
    }
    const JobStatus status = h.Job("a");
    if (ours) {
      EXPECT_EQ(h.executor.runs.size(), 2u) << "the second slot runs";
      EXPECT_TRUE(status.skips.empty());
    } else {
      EXPECT_EQ(h.executor.runs.size(), 1u);
      EXPECT_EQ(status.skips.at("busy"), 1u);
    }
  }
}

TEST(ProbeScheduler, TimeoutFreesTheDevice) {
  Harness h;
  h.device_of = {{"a", kSda}, {"b", kSda}};
  h.Make({MakeJob("a", 900, 0, 10), MakeJob("b", 900, 0, 10)}, Policy());
  EXPECT_EQ(h.TickAt(0), 20) << "the write-off time is the next thing to do";
  const ProbeRun hung = h.executor.runs.at(0);
  h.TickAt(19.9);
  EXPECT_FALSE(hung.cancel->cancelled());
  EXPECT_EQ(h.executor.runs.size(), 1u);
  h.TickAt(20);
  EXPECT_TRUE(hung.cancel->cancelled());
  const JobStatus a = h.Job("a");
  EXPECT_EQ(a.runs.error, 1u);
  EXPECT_FALSE(a.running);
  EXPECT_EQ(a.last_error, "timed out: no result within 20 s");
  EXPECT_EQ(a.last_duration_s, 20);
  ASSERT_EQ(h.RunNames(), (std::vector<std::string>{"a", "b"})) << "b got the device";
  ASSERT_EQ(h.outcomes.size(), 1u);
  EXPECT_EQ(h.outcomes[0].second.result, RunResult::kError);
  // The hung run reports at last: dropped, counted once.
  EXPECT_FALSE(h.Finish(hung));
  EXPECT_EQ(h.Job("a").runs.error, 1u);
  EXPECT_EQ(h.Job("a").runs.ok, 0u);
  EXPECT_EQ(h.outcomes.size(), 1u);
  EXPECT_FALSE(h.scheduler->OnFinished(0, RunOutcome::Of(RunResult::kOk)));
}

// Adversarial review: a first fill of a large file counted against
// the run's timeout, so the run was written off while it filled. Preparing is
// timed apart: while it goes on, the fill may take until the file is written
// at 4 MiB/s; once done, its duration moves the write-off by as much.
TEST(ProbeScheduler, PreparingTheTargetIsNotCountedAgainstTheTimeout) {
  Harness h;
  h.device_of = {{"a", kSda}};
  ScheduledJob job = MakeJob("a", 900, 0, 10);
  job.spec.size = uint64_t{400} << 20;  // 100 s at 4 MiB/s
  h.Make({job}, Policy());
  h.TickAt(0);
  const ProbeRun run = h.executor.runs.at(0);
  run.cancel->Preparing();
  EXPECT_EQ(h.TickAt(14), 120) << "timeout 10 + grace 10 + the fill allowance 100";
  h.TickAt(60);
  EXPECT_FALSE(run.cancel->cancelled()) << "still filling, within its allowance";
  run.cancel->Prepared(70);  // the fill took 70 s
  EXPECT_EQ(h.TickAt(89.9), 90);
  EXPECT_FALSE(run.cancel->cancelled());
  h.TickAt(90);
  EXPECT_TRUE(run.cancel->cancelled()) << "10 s of I/O + 10 s of grace after the fill";
  EXPECT_EQ(h.Job("a").last_error, "timed out: no result within 90 s");
}

TEST(ProbeScheduler, AFillSlowerThanItsAllowanceIsWrittenOff) {
  Harness h;
  h.device_of = {{"a", kSda}};
  ScheduledJob job = MakeJob("a", 900, 0, 10);
  job.spec.size = uint64_t{40} << 20;  // 10 s at 4 MiB/s
  h.Make({job}, Policy());
  h.TickAt(0);
  const ProbeRun run = h.executor.runs.at(0);
  run.cancel->Preparing();
  h.TickAt(29.9);
  EXPECT_FALSE(run.cancel->cancelled());
  h.TickAt(30);
  EXPECT_TRUE(run.cancel->cancelled());
}

// Adversarial review: the partial result of a hung run always
// arrived after the write-off and was dropped, so the store never held the
// run that showed the hang. It is passed on, counted no second time.
TEST(ProbeScheduler, ALateMeasurementOfAWrittenOffRunIsStillRecorded) {
  Harness h;
  h.device_of = {{"a", kSda}};
  h.Make({MakeJob("a", 900, 0, 10)}, Policy());
  h.TickAt(0);
  const ProbeRun hung = h.executor.runs.at(0);
  h.TickAt(20);
  ASSERT_EQ(h.outcomes.size(), 1u);
  RunOutcome late = RunOutcome::Of(RunResult::kError, "timed out at the hard limit");
  late.probe.emplace();
  late.probe->end = probes::RunEnd::kTimedOut;
  EXPECT_TRUE(h.scheduler->OnFinished(hung.id, late));
  ASSERT_EQ(h.outcomes.size(), 2u);
  EXPECT_EQ(h.outcomes[1].first, "a");
  ASSERT_TRUE(h.outcomes[1].second.probe.has_value());
  EXPECT_EQ(h.outcomes[1].second.probe->end, probes::RunEnd::kTimedOut);
  EXPECT_EQ(h.Job("a").runs.error, 1u);                  // the write-off's count only
  EXPECT_FALSE(h.scheduler->OnFinished(hung.id, late));  // once
}

TEST(ProbeScheduler, ShutdownMidProbeCancelsItAndStartsNothing) {
  Harness h;
  h.device_of = {{"a", kSda}, {"b", kNvme}};
  h.Make({MakeJob("a", 900), MakeJob("b", 900, 0)}, Policy(1));
  h.TickAt(0);
  ASSERT_EQ(h.executor.runs.size(), 1u);
  const ProbeRun running = h.executor.runs[0];
  h.scheduler->Shutdown();
  EXPECT_TRUE(running.cancel->cancelled());
  // The executor sees the token and reports a cancelled run.
  EXPECT_TRUE(h.Finish(running, RunResult::kCancelled));
  h.TickAt(1);
  h.TickAt(1000);
  EXPECT_EQ(h.executor.runs.size(), 1u) << "b never starts";
  const SchedulerStatus status = h.scheduler->Status();
  EXPECT_TRUE(status.shut_down);
  EXPECT_EQ(status.running, 0u);
  EXPECT_EQ(h.Job("a").runs.cancelled, 1u);
  EXPECT_EQ(h.Job("a").runs.ok + h.Job("a").runs.error, 0u);
  ASSERT_EQ(h.outcomes.size(), 1u);
  EXPECT_EQ(h.outcomes[0].second.result, RunResult::kCancelled);  // the sink drops it
  EXPECT_EQ(ToString(RunResult::kCancelled), "cancelled");
}

TEST(ProbeScheduler, StatusTellsProbeTimeApartPerDevice) {
  Harness h;
  h.device_of = {{"a", kSda}, {"b", kNvme}};
  h.Make({MakeJob("a", 900), MakeJob("b", 900, 0)}, Policy(1));
  h.TickAt(0);
  SchedulerStatus status = h.scheduler->Status();
  ASSERT_EQ(status.devices.size(), 2u);  // both gauges exist from the first tick
  EXPECT_EQ(status.devices[0].device, kSda);
  EXPECT_TRUE(status.devices[0].probe_running);
  EXPECT_EQ(status.devices[0].job, "a");
  EXPECT_FALSE(status.devices[1].probe_running);
  EXPECT_TRUE(h.Job("a").running);
  EXPECT_EQ(h.Job("a").last_start_s, 0);

  h.now = 3.5;
  RunOutcome ok = RunOutcome::Of(RunResult::kOk);
  ok.start_unix_ms = 1'700'000'000'000;
  h.scheduler->OnFinished(h.executor.runs[0].id, std::move(ok));
  status = h.scheduler->Status();
  EXPECT_FALSE(status.devices[0].probe_running);
  const JobStatus a = h.Job("a");
  RunCounts one_ok;
  one_ok.ok = 1;
  EXPECT_EQ(a.runs, one_ok);
  EXPECT_EQ(a.last_end_s, 3.5);
  EXPECT_EQ(a.last_duration_s, 3.5);
  EXPECT_EQ(a.last_result, RunResult::kOk);
  EXPECT_EQ(a.last_start_unix_ms, 1'700'000'000'000);
  EXPECT_EQ(a.next_attempt_s, 900);
  EXPECT_EQ(h.Job("b").next_attempt_s, 0) << "due, waiting for the global slot";
}

TEST(ProbeScheduler, SlotsMissedWhileRunningAreDroppedNotMadeUp) {
  Harness h;
  h.device_of["a"] = kSda;
  h.Make({MakeJob("a", 10, 0, 100)}, Policy());
  h.TickAt(0);
  for (double t = 1; t < 35; t += 1) h.TickAt(t);
  EXPECT_EQ(h.executor.runs.size(), 1u);
  h.Finish(h.executor.runs[0]);
  h.TickAt(35);
  EXPECT_EQ(h.executor.runs.size(), 2u) << "one run for the slots that passed";
  h.Finish(h.executor.runs[1]);
  EXPECT_EQ(h.TickAt(36), 40) << "then back on the period";
}

TEST(ProbeScheduler, JobsAndPolicyFromTheConfig) {
  config::ProbesConfig probes;
  const auto jobs = ScheduledJobsFrom(probes, "/var/lib/iowatch");
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].name, "randread-4k-qd1");
  EXPECT_EQ(jobs[0].spec.TargetPath(), "/var/lib/iowatch/probes/randread-4k-qd1.0.0");
  EXPECT_EQ(jobs[0].every, std::chrono::minutes(15));
  const SchedulerPolicy policy = SchedulerPolicyFrom(probes);
  EXPECT_EQ(policy.max_concurrent, 1u);
  EXPECT_EQ(policy.busy_threshold, 0.5);
  EXPECT_EQ(policy.busy_window_s, 60);
  EXPECT_EQ(policy.busy_retry_s, 60);
  EXPECT_EQ(policy.max_skips, 10u);
  probes.enabled = false;
  EXPECT_TRUE(ScheduledJobsFrom(probes, "/s").empty());
}

// I/Os a hung device still holds after a run gave up (its context and
// buffers): they complete when the test says so.
class HungContext final : public probes::AbandonedIo {
 public:
  explicit HungContext(std::shared_ptr<bool> completed) : completed_(std::move(completed)) {}
  uint32_t Poll() noexcept override { return *completed_ ? 0 : 8; }

 private:
  std::shared_ptr<bool> completed_;
};

std::unique_ptr<probes::HeldIo> HeldUntil(std::shared_ptr<bool> completed) {
  auto buffers = probes::IoBuffers::Allocate(8, 4096, 4096);
  EXPECT_TRUE(buffers);
  return std::make_unique<probes::HeldIo>(std::make_unique<HungContext>(std::move(completed)),
                                          std::move(*buffers), 8);
}

// A device that holds I/Os of a run that gave up on it is
// not probed again (each run would leave its context, buffers and aio-nr
// behind) until they complete; other devices are; nothing at all beyond
// AbandonedIoPool::kMaxHeldIos.
TEST(ProbeScheduler, ADeviceHoldingAbandonedIoIsNotProbedUntilItDrains) {
  Harness h;
  h.device_of = {{"hung", kSda}, {"fine", kSdb}};
  h.executor.finish_at_once = true;
  h.Make({MakeJob("hung", 10), MakeJob("fine", 10)}, Policy(2));
  auto completed = std::make_shared<bool>(false);
  h.abandoned.Keep(kSda, HeldUntil(completed));
  h.TickAt(0);
  EXPECT_EQ(h.RunNames(), std::vector<std::string>{"fine"});
  EXPECT_EQ(h.Job("hung").last_result, RunResult::kSkipped);
  EXPECT_NE(h.Job("hung").last_error.find("still holds 8 I/Os"), std::string::npos)
      << h.Job("hung").last_error;
  h.TickAt(10);
  EXPECT_EQ(h.RunNames(), (std::vector<std::string>{"fine", "fine"}));
  EXPECT_EQ(h.abandoned.HeldOn(kSda), 8u);
  *completed = true;  // the device answered at last
  h.TickAt(20);
  EXPECT_EQ(h.RunNames(), (std::vector<std::string>{"fine", "fine", "hung", "fine"}));
  EXPECT_EQ(h.abandoned.HeldInAll(), 0u);
}

TEST(ProbeScheduler, NoDeviceIsProbedWhileTooManyIosAreHeld) {
  Harness h;
  h.device_of = {{"fine", kSdb}};
  h.executor.finish_at_once = true;
  h.Make({MakeJob("fine", 10)}, Policy());
  auto never = std::make_shared<bool>(false);
  for (uint32_t i = 0; i < AbandonedIoPool::kMaxHeldIos / 8; ++i) {
    h.abandoned.Keep(MakeDeviceId(65, i), HeldUntil(never));
  }
  h.TickAt(0);
  EXPECT_TRUE(h.executor.runs.empty());
  EXPECT_NE(h.Job("fine").last_error.find("at most 4096"), std::string::npos)
      << h.Job("fine").last_error;
}

}  // namespace
}  // namespace iowatch::daemon
