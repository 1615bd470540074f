#include "daemon/passive/passive_service.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "probes/store/store.h"
#include "probes/verdicts/passive/passive_drift.h"

namespace iowatch::daemon {
namespace {

// A sample at second `t` of sda (a disk), sda1 (its partition) and dm-0,
// each doing 100 reads of 0.5 ms a second.
Snapshot At(uint64_t t, const std::shared_ptr<const std::vector<collectors::BlockDevice>>& devs) {
  Snapshot s;
  s.timestamp_seconds = 1'000'000.0 + static_cast<double>(t);
  s.monotonic_seconds = 10.0 + static_cast<double>(t);
  for (const char* name : {"dm-0", "sda", "sda1"}) {
    DeviceSnapshot d;
    d.name = name;
    d.counters.reads = 100 * t;
    d.counters.read_sectors = 800 * t;
    d.counters.read_ms = 50 * t;
    d.counters.field_count = 17;
    s.devices.push_back(d);
  }
  s.block_devices = devs;
  return s;
}

std::shared_ptr<const std::vector<collectors::BlockDevice>> Devices() {
  auto devs = std::make_shared<std::vector<collectors::BlockDevice>>(3);
  (*devs)[0].name = "dm-0";
  (*devs)[1].name = "sda";
  (*devs)[2].name = "sda1";
  (*devs)[2].is_partition = true;
  (*devs)[2].parent = "sda";
  return devs;
}

// Whole disks are judged, partitions (their disk's I/O) and the excluded
// dm device not; a disk gone from the sample takes its series with it.
TEST(PassiveService, JudgesWholeDisksOutsideTheExclusion) {
  PassiveOptions options;
  options.exclude = *NamePattern::Compile(kPassiveDefaultExclude);
  PassiveService service(std::move(options));
  const auto devs = Devices();
  for (uint64_t t = 0; t <= 80; ++t) service.OnSample(At(t, devs), {});
  const std::shared_ptr<const PassiveSnapshot> latest = service.Latest();
  ASSERT_EQ(latest->series.size(), 1u);  // sda's reads; it writes nothing
  const PassiveSeriesRow& read = latest->series[0];
  EXPECT_EQ(read.device, "sda");
  EXPECT_EQ(read.op, "read");
  EXPECT_EQ(read.last.window.requests, 6000u);
  EXPECT_EQ(read.last.reason, probes::PassiveReason::kLearning);
  EXPECT_EQ(read.windows[static_cast<size_t>(probes::PassiveReason::kLearning)], 2u);

  // sda gone: its series go at the next window.
  Snapshot gone = At(140, devs);
  std::erase_if(gone.devices, [](const DeviceSnapshot& d) { return d.name == "sda"; });
  service.OnSample(gone, {});
  EXPECT_TRUE(service.Latest()->series.empty());
}

// Another disk under the same name (a new diskseq: replaced, or removed
// and added) starts afresh: the old disk's series and model are not its.
TEST(PassiveService, ADiskReplacedUnderTheSameNameStartsAfresh) {
  PassiveService service(PassiveOptions{});
  auto devs = std::make_shared<std::vector<collectors::BlockDevice>>(*Devices());
  (*devs)[1].diskseq = 7;
  for (uint64_t t = 0; t <= 80; ++t) service.OnSample(At(t, devs), {});
  const auto sda_learning = [&] {
    for (const PassiveSeriesRow& row : service.Latest()->series) {
      if (row.device == "sda")
        return row.windows[static_cast<size_t>(probes::PassiveReason::kLearning)];
    }
    return uint64_t{0};
  };
  EXPECT_EQ(sda_learning(), 2u);
  auto replaced = std::make_shared<std::vector<collectors::BlockDevice>>(*devs);
  (*replaced)[1].diskseq = 8;
  for (uint64_t t = 81; t <= 140; ++t) service.OnSample(At(t, replaced), {});
  EXPECT_EQ(sda_learning(), 1u) << "the old disk's minutes were kept";
}

// A probe's disk, named by the daemon, leaves the minute unjudged.
TEST(PassiveService, AProbedDisksMinuteIsCountedAsSuch) {
  PassiveService service(PassiveOptions{});
  const auto devs = Devices();
  const std::vector<std::string> probing = {"sda"};
  for (uint64_t t = 0; t <= 20; ++t)
    service.OnSample(At(t, devs), t == 5 ? probing : std::vector<std::string>{});
  for (const PassiveSeriesRow& row : service.Latest()->series) {
    const size_t probe = row.windows[static_cast<size_t>(probes::PassiveReason::kProbe)];
    EXPECT_EQ(probe, row.device == "sda" ? 1u : 0u) << row.device << " " << row.op;
  }
}

// The production totals (the peer rules' 15-minute means) count every
// window's requests and latency but the probed one's.
TEST(PassiveService, TheProductionTotalsLeaveTheProbedMinuteOut) {
  PassiveService service(PassiveOptions{});
  const auto devs = Devices();
  const std::vector<std::string> probing = {"sda"};
  for (uint64_t t = 0; t <= 140; ++t)
    service.OnSample(At(t, devs), t == 5 ? probing : std::vector<std::string>{});
  ASSERT_EQ(service.Latest()->series.size(), 2u);  // sda's and dm-0's reads
  for (const PassiveSeriesRow& row : service.Latest()->series) {
    // Minutes [20, 80) and [80, 140) of 6,000 reads of 0.5 ms; sda's first,
    // partial one [0, 20) had the probe.
    const uint64_t requests = row.device == "sda" ? 12'000 : 14'000;
    EXPECT_EQ(row.production_requests, requests) << row.device;
    EXPECT_NEAR(row.production_seconds, static_cast<double>(requests) * 0.0005, 1e-9);
  }
}

// sda alone (diskseq `seq`), reading 100 requests a second; `ms_per_second`
// of diskstats' read time each second.
class Sda {
 public:
  explicit Sda(uint64_t seq, std::string serial = "")
      : devs_(std::make_shared<std::vector<collectors::BlockDevice>>(1)) {
    (*devs_)[0].name = "sda";
    (*devs_)[0].diskseq = seq;
    (*devs_)[0].serial = std::move(serial);
  }
  Snapshot Next(uint64_t ms_per_second) {
    ++t_;
    read_ms_ += ms_per_second;
    Snapshot s;
    s.timestamp_seconds = 1'800'000'000.0 + static_cast<double>(t_);
    s.monotonic_seconds = 10.0 + static_cast<double>(t_);
    DeviceSnapshot d;
    d.name = "sda";
    d.counters.reads = 100 * t_;
    d.counters.read_sectors = 800 * t_;
    d.counters.read_ms = read_ms_;
    d.counters.field_count = 17;
    s.devices.push_back(d);
    s.block_devices = devs_;
    return s;
  }
  void Feed(PassiveService& service, int seconds, uint64_t ms_per_second) {
    for (int i = 0; i < seconds; ++i) service.OnSample(Next(ms_per_second), {});
  }
  // A sample a minute (each closes a window), its read time `ms_of(minute)`
  // for the minute's 6,000 reads, the minute counted from the first sample.
  template <typename MsOf>
  void FeedMinutes(PassiveService& service, int minutes, MsOf ms_of) {
    for (int i = 0; i < minutes; ++i) {
      t_ += 59;
      read_ms_ += ms_of(minute_) - ms_of(minute_) / 60;
      ++minute_;
      service.OnSample(Next(ms_of(minute_ - 1) / 60), {});
    }
  }

 private:
  std::shared_ptr<std::vector<collectors::BlockDevice>> devs_;
  uint64_t t_ = 0;
  uint64_t read_ms_ = 0;
  int minute_ = 0;
};

// The judged totals sum each judged window's requests times its observed
// and its predicted mean, nothing of the learning ones: after a steady
// learning hour, 30 judged minutes twice as slow sum to twice the model's.
TEST(PassiveService, TheJudgedTotalsWeighEachJudgedWindowByItsRequests) {
  PassiveService service(PassiveOptions{});
  Sda sda(1);
  sda.FeedMinutes(service, 70, [](int) { return uint64_t{3000}; });  // 0.5 ms a read
  const auto judged = [&] {
    const PassiveSeriesRow& row = service.Latest()->series.at(0);
    return row.windows[static_cast<size_t>(probes::PassiveReason::kJudged)];
  };
  const uint64_t judged_before = judged();
  const double predicted_before = service.Latest()->series.at(0).predicted_seconds;
  const double observed_before = service.Latest()->series.at(0).judged_seconds;
  sda.FeedMinutes(service, 30, [](int) { return uint64_t{6000}; });  // 1 ms
  const PassiveSeriesRow& row = service.Latest()->series.at(0);
  ASSERT_EQ(judged() - judged_before, 30u);
  EXPECT_NEAR(row.judged_seconds - observed_before, 30 * 6000 * 0.001, 1e-6);
  EXPECT_NEAR(row.predicted_seconds - predicted_before, 30 * 6000 * 0.0005, 0.01 * 90);
}

class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = "/var/tmp/iowatch-passive-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& Path() const { return path_; }

 private:
  std::filesystem::path path_;
};

PassiveOptions Stored(const ScratchDir& dir) {
  PassiveOptions options;
  options.state_dir = dir.Path();
  return options;
}

// A regression stands across a restart, from the same first bad window, and
// the model is not learned again: the restarted service judges its first
// minute and clears after K good ones.
TEST(PassiveService, ARegressionAndTheModelSurviveARestart) {
  ScratchDir dir;
  Sda sda(7);
  size_t model_windows = 0;
  int64_t since_ms = 0;
  {
    PassiveService service(Stored(dir));
    sda.Feed(service, 2 * 3600, 50);  // two hours at 0.5 ms
    sda.Feed(service, 5 * 60, 150);   // five minutes at 1.5 ms: raised
    const std::shared_ptr<const PassiveSnapshot> latest = service.Latest();
    ASSERT_EQ(latest->series.size(), 1u);
    EXPECT_TRUE(latest->store_up);
    ASSERT_TRUE(latest->series[0].regressed);
    since_ms = latest->series[0].regressed_since_ms;
    model_windows = latest->series[0].model_windows;
    EXPECT_GT(model_windows, 60u);
  }
  PassiveService restarted(Stored(dir));
  sda.Feed(restarted, 1, 150);
  {
    const std::shared_ptr<const PassiveSnapshot> latest = restarted.Latest();
    ASSERT_EQ(latest->series.size(), 1u) << "exported from the first sample";
    const PassiveSeriesRow& row = latest->series[0];
    EXPECT_TRUE(row.regressed);
    EXPECT_EQ(row.regressed_since_ms, since_ms);
    ASSERT_TRUE(row.judged);
    EXPECT_GT(row.judged->ratio, 2.5);
    EXPECT_GE(row.model_windows, model_windows);
  }
  sda.Feed(restarted, 2 * 60, 150);  // the first (partial) window, then a whole one
  EXPECT_EQ(restarted.Latest()->series[0].last.reason, probes::PassiveReason::kJudged);
  sda.Feed(restarted, 4 * 60, 50);  // back to 0.5 ms: cleared after three windows
  EXPECT_FALSE(restarted.Latest()->series[0].regressed);
}

// A disk's first day is kept across a restart: the windows it chose are
// marked in the store, and the restarted judge compares with that day (a
// judge that chose again would still be calibrating): a disk that then loses
// 5 % a day is raised by the drift watch, which no window is.
TEST(PassiveService, TheFirstDayIsKeptAcrossARestart) {
  ScratchDir dir;
  Sda sda(7);
  const int kDay = 24 * 60;
  const auto steady = [](int) { return uint64_t{3000}; };  // 0.5 ms a read
  {
    PassiveService service(Stored(dir));
    sda.FeedMinutes(service, 5 * kDay, steady);
    const std::shared_ptr<const PassiveSnapshot> latest = service.Latest();
    ASSERT_EQ(latest->series.size(), 1u);
    ASSERT_TRUE(latest->series[0].drift_ratio) << "compared after its calibration";
    EXPECT_NEAR(*latest->series[0].drift_ratio, 1, 0.01);
  }
  Result<probes::Store> store = probes::Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store);
  const auto reference =
      store->PassiveLearned("sda", "read", "all", probes::PassiveSource::kDiskstats, 10'000, true);
  ASSERT_TRUE(reference);
  EXPECT_EQ(reference->size(), probes::PassiveDrift::kMaxReferencePoints);
  PassiveService restarted(Stored(dir));
  sda.FeedMinutes(restarted, 1, steady);
  ASSERT_EQ(restarted.Latest()->series.size(), 1u);
  ASSERT_TRUE(restarted.Latest()->series[0].drift_ratio) << "the first day and its level restored";
  EXPECT_NEAR(*restarted.Latest()->series[0].drift_ratio, 1, 0.01);
  const int from = 5 * kDay + 1;
  bool window_raised = false;
  int raised_at = -1;
  for (int m = 0; m < 4 * kDay && raised_at < 0; ++m) {
    sda.FeedMinutes(restarted, 1, [&](int minute) {
      const double days = static_cast<double>(minute - from) / kDay;
      return static_cast<uint64_t>(3000 * (1 + 0.05 * std::max(0.0, days)));
    });
    const PassiveSeriesRow& row = restarted.Latest()->series.at(0);
    window_raised = window_raised || (row.regressed && !row.drift_raised);
    if (row.drift_raised) raised_at = m;
  }
  EXPECT_FALSE(window_raised) << "a 5 % a day loss is not any window's";
  ASSERT_GE(raised_at, 0) << "not raised in 4 days of a 5 % a day loss";
  EXPECT_GT(raised_at, 2 * kDay) << "raised before the loss was 10 %";
}

// The stored series of a disk that another disk replaced (a new diskseq
// under the same name) are not restored, and go from the store.
TEST(PassiveService, AReplacedDisksStoredSeriesAreNotRestored) {
  ScratchDir dir;
  {
    PassiveService service(Stored(dir));
    Sda sda(7);
    sda.Feed(service, 2 * 3600, 50);
  }
  {
    PassiveService restarted(Stored(dir));
    Sda replaced(8);
    replaced.Feed(restarted, 1, 50);
    EXPECT_TRUE(restarted.Latest()->series.empty());
    replaced.Feed(restarted, 3 * 60, 50);
    ASSERT_EQ(restarted.Latest()->series.size(), 1u);
    EXPECT_EQ(restarted.Latest()->series[0].model_windows, 0u) << "learned afresh";
  }
  Result<probes::Store> store = probes::Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store);
  std::vector<probes::UnreadablePassiveState> unreadable;
  const auto states = store->PassiveStates(unreadable);
  ASSERT_TRUE(states);
  ASSERT_EQ(states->size(), 1u);
  EXPECT_EQ((*states)[0].identity, "diskseq 8");
  const auto learned =
      store->PassiveLearned("sda", "read", "all", probes::PassiveSource::kDiskstats, 10'000);
  ASSERT_TRUE(learned);
  EXPECT_LE(learned->size(), 3u) << "the old disk's learned windows are gone";
}

// After a reboot the kernel numbers its disks again (another diskseq): a
// disk with the same serial is the same disk, and gets its series back.
TEST(PassiveService, ADiskWithTheSameSerialAfterARebootIsRestored) {
  ScratchDir dir;
  size_t model_windows = 0;
  {
    PassiveService service(Stored(dir));
    Sda sda(7, "S3Z9NB0K");
    sda.Feed(service, 2 * 3600, 50);
    model_windows = service.Latest()->series.at(0).model_windows;
    ASSERT_GT(model_windows, 0u);
  }
  PassiveService rebooted(Stored(dir));
  Sda sda(2, "S3Z9NB0K");
  sda.Feed(rebooted, 1, 50);
  ASSERT_EQ(rebooted.Latest()->series.size(), 1u);
  EXPECT_GE(rebooted.Latest()->series[0].model_windows, model_windows);
}

// `iowatch health` reads the store: a regression the daemon stored is its
// disk's while the disk is the same one, with its since and ratio.
TEST(PassiveService, AStoredRegressionIsTheVerdictOfTheSameDiskOnly) {
  ScratchDir dir;
  {
    PassiveService service(Stored(dir));
    Sda sda(7, "S3Z9NB0K");
    sda.Feed(service, 2 * 3600, 50);
    sda.Feed(service, 5 * 60, 150);
    ASSERT_TRUE(service.Latest()->series.at(0).regressed);
  }
  Result<probes::Store> store = probes::Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store);
  std::vector<probes::UnreadablePassiveState> unreadable;
  const auto states = store->PassiveStates(unreadable);
  ASSERT_TRUE(states);
  Sda same(9, "S3Z9NB0K");
  const std::vector<PassiveSeriesVerdict> verdicts = StoredPassiveVerdicts(*states, same.Next(0));
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_TRUE(verdicts[0].regressed);
  EXPECT_GT(verdicts[0].since_unix_ms, 1'800'000'000'000);
  EXPECT_GT(verdicts[0].ratio, 2.5);
  EXPECT_EQ(verdicts[0].source, "diskstats");
  Sda other(9, "OTHER");
  EXPECT_TRUE(StoredPassiveVerdicts(*states, other.Next(0)).empty());
}

// `iowatch baseline passive-reset sda` while the daemon runs: the running
// judge forgets the disk (its regression cleared, learning again), and the
// old judge's windows and states do not come back in the store. A smoke
// check on the writer's poll (10 ms here), with seconds of margin.
TEST(PassiveService, AResetWhileRunningForgetsTheDiskForGood) {
  ScratchDir dir;
  PassiveOptions options = Stored(dir);
  options.reset_poll = std::chrono::milliseconds(10);
  PassiveService service(std::move(options));
  Sda sda(7, "S3Z9NB0K");
  sda.Feed(service, 2 * 3600, 50);
  sda.Feed(service, 5 * 60, 150);
  ASSERT_TRUE(service.Latest()->series.at(0).regressed);
  {
    Result<probes::Store> cli = probes::Store::OpenInStateDir(dir.Path());
    ASSERT_TRUE(cli);
    ASSERT_TRUE(cli->ResetPassiveDevice("sda", 1'900'000'000'000));
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!service.Latest()->series.empty() && std::chrono::steady_clock::now() < deadline) {
    sda.Feed(service, 1, 150);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(service.Latest()->series.empty()) << "the reset was not seen in 10 s";
  sda.Feed(service, 3 * 60, 150);  // learning the new level
  ASSERT_EQ(service.Latest()->series.size(), 1u);
  EXPECT_FALSE(service.Latest()->series[0].regressed);
  EXPECT_EQ(service.Latest()->series[0].model_windows, 0u);
}

// A raise asks the daemon, once, to confirm it with the disk's probes.
TEST(PassiveService, ARaiseAsksForAConfirmationOfItsDisk) {
  std::vector<std::string> asked;
  PassiveOptions options;
  options.on_raise = [&](const std::string& device) { asked.push_back(device); };
  PassiveService service(std::move(options));
  Sda sda(3);
  sda.Feed(service, 2 * 3600, 50);
  EXPECT_TRUE(asked.empty());
  sda.Feed(service, 10 * 60, 150);
  EXPECT_EQ(asked, std::vector<std::string>{"sda"});
}

// Without a usable state directory the judge runs in memory, and says so.
TEST(PassiveService, AnUnusableStateDirectoryLeavesTheJudgeInMemory) {
  PassiveOptions options;
  options.state_dir = "/proc/iowatch-cannot-be-here";
  PassiveService service(std::move(options));
  Sda sda(1);
  sda.Feed(service, 3 * 60, 50);
  EXPECT_FALSE(service.Latest()->store_up);
  EXPECT_EQ(service.Latest()->series.size(), 1u);
}

}  // namespace
}  // namespace iowatch::daemon
