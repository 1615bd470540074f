// passive_states and passive_windows: a passive series' state and windows
// stored and read back whole, learned marks, pruning that keeps what a
// restart refits from, a malformed row moved aside alone, a version-9 store
// migrated.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "probes/store/store.h"
#include "tests/unit/probes/store/store_test_util.h"

namespace iowatch::probes {
namespace {

constexpr int64_t kPassiveMinute = 60'000;
constexpr int64_t kPassiveT0 = 1'800'000'000'000;

PassiveWindow PassiveAt(int64_t minute, double mean_seconds = 0.002) {
  PassiveWindow w;
  w.device = "sda";
  w.op = "read";
  w.size = "all";
  w.source = PassiveSource::kDevice;
  w.start_ms = kPassiveT0 + minute * kPassiveMinute;
  w.end_ms = w.start_ms + kPassiveMinute;
  w.requests = 6000;
  w.mean_seconds = mean_seconds;
  w.rate = 100;
  w.other_bytes_rate = 1.5e6;
  w.mean_bytes = 8192;
  w.steal = 0.01;
  w.queue_depth = 0.4;
  w.utilization = 0.3;
  return w;
}

StoredPassiveWindow StoredAt(int64_t minute, bool learned) {
  StoredPassiveWindow s;
  s.window = PassiveAt(minute);
  s.reason = learned ? "judged" : "too_few_requests";
  s.predicted_seconds = learned ? 0.0019 : 0;
  s.bound_ratio = learned ? 1.3 : 0;
  s.learned = learned;
  return s;
}

StoredPassiveState SamplePassiveState() {
  StoredPassiveState s;
  s.device = "sda";
  s.op = "read";
  s.size = "all";
  s.source = PassiveSource::kDevice;
  s.identity = "wwn-0x5000";
  s.through_unix_ms = kPassiveT0 + 90 * kPassiveMinute;
  RegressionTracker tracker(3);
  MetricVerdict bad;
  bad.op = "read";
  bad.metric = "lat_mean_seconds";
  bad.value = 0.004;
  bad.baseline = 0.002;
  bad.ratio = 2;
  bad.threshold = 0.0006;
  bad.bad = true;
  for (int i = 0; i < 3; ++i) {
    tracker.Update(std::span<const MetricVerdict>(&bad, 1), PassiveAt(80 + i).start_ms,
                   PassiveAt(80 + i).end_ms, true);
  }
  s.state.tracker = tracker.Entries();
  s.state.waiting = {PassiveAt(89, 0.0031), PassiveAt(90, 0.0032)};
  s.state.since_fit = 17;
  s.state.streak_windows = 9;
  s.state.drift.calibrate_until_ms = kPassiveT0 + 60 * kPassiveMinute;
  s.state.drift.calibration_fits = 72;
  s.state.drift.calibration_sum = 0.5625;
  s.state.drift.level = 0.109375;
  s.state.drift.streak = 2;
  s.state.drift.raised = true;
  s.state.drift.since_ms = kPassiveT0 + 70 * kPassiveMinute;
  s.last_judged = PassiveJudgedFigures{PassiveAt(90).end_ms, 0.0032, 0.002, 1.6, 1.3};
  return s;
}

TEST(StorePassive, AStateAndItsWindowsAreReadBackWhole) {
  test_store::ScratchDir dir;
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store) << store.error().ToString();
  std::vector<StoredPassiveWindow> windows;
  for (int m = 0; m < 5; ++m) windows.push_back(StoredAt(m, m != 2));
  const std::vector<StoredPassiveState> states = {SamplePassiveState()};
  ASSERT_TRUE(store->PutPassive(windows, {}, states));
  std::vector<UnreadablePassiveState> unreadable;
  const auto got = store->PassiveStates(unreadable);
  ASSERT_TRUE(got) << got.error().ToString();
  EXPECT_TRUE(unreadable.empty());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0], SamplePassiveState());
  RegressionTracker restored(3);
  restored.Restore((*got)[0].state.tracker);
  EXPECT_TRUE(restored.Regressed("read", "lat_mean_seconds"));
  EXPECT_EQ(restored.RegressedSinceMs("read", "lat_mean_seconds"), PassiveAt(80).start_ms);

  const auto all = store->PassiveWindows(0, kPassiveT0 + 10 * kPassiveMinute);
  ASSERT_TRUE(all);
  EXPECT_EQ(*all, windows);
  const auto learned = store->PassiveLearned("sda", "read", "all", PassiveSource::kDevice, 3);
  ASSERT_TRUE(learned);
  // The newest three learned, oldest first: minutes 1, 3, 4.
  ASSERT_EQ(learned->size(), 3u);
  EXPECT_EQ((*learned)[0], PointOf(PassiveAt(1)));
  EXPECT_EQ((*learned)[2], PointOf(PassiveAt(4)));
  EXPECT_TRUE(store->PassiveLearned("sda", "read", "all", PassiveSource::kDiskstats, 3)->empty());
}

TEST(StorePassive, AWindowLearnedAfterItsStreakBrokeIsMarked) {
  test_store::ScratchDir dir;
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store);
  const std::vector<StoredPassiveWindow> windows = {StoredAt(0, false)};
  ASSERT_TRUE(store->PutPassive(windows, {}, {}));
  const std::vector<PassiveLearnedMark> marks = {
      {"sda", "read", "all", PassiveSource::kDevice, PassiveAt(0).end_ms}};
  ASSERT_TRUE(store->PutPassive({}, marks, {}));
  const auto learned = store->PassiveLearned("sda", "read", "all", PassiveSource::kDevice, 10);
  ASSERT_TRUE(learned);
  ASSERT_EQ(learned->size(), 1u);
  EXPECT_EQ((*learned)[0], PointOf(PassiveAt(0)));
}

TEST(StorePassive, PruningKeepsTheNewestLearnedWindowsWhateverTheirAge) {
  test_store::ScratchDir dir;
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store);
  std::vector<StoredPassiveWindow> windows;
  for (int m = 0; m < 20; ++m) windows.push_back(StoredAt(m, m % 2 == 0));  // 10 learned
  ASSERT_TRUE(store->PutPassive(windows, {}, {}));
  // Before minute 16: 8 learned (0..14), 8 not; from there, 2 learned (16, 18).
  // Keeping 5 learned: 16, 18 and the three newest before the cutoff (10, 12, 14).
  const auto deleted = store->PrunePassiveWindows(PassiveAt(16).end_ms - 1, 5);
  ASSERT_TRUE(deleted) << deleted.error().ToString();
  EXPECT_EQ(*deleted, 8 + 5);
  const auto left = store->PassiveWindows(0, kPassiveT0 + 30 * kPassiveMinute);
  ASSERT_TRUE(left);
  std::vector<int64_t> minutes;
  for (const StoredPassiveWindow& w : *left)
    minutes.push_back((w.window.start_ms - kPassiveT0) / kPassiveMinute);
  EXPECT_EQ(minutes, (std::vector<int64_t>{10, 12, 14, 16, 17, 18, 19}));
}

TEST(StorePassive, AnUnreadableStateIsNamedAndQuarantinedAlone) {
  test_store::ScratchDir dir;
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store);
  const std::vector<StoredPassiveState> states = {SamplePassiveState()};
  ASSERT_TRUE(store->PutPassive({}, {}, states));
  test_store::Exec(dir.Db(),
                   "INSERT INTO passive_states VALUES ('sdb', 'write', 'all', 'diskstats', '', "
                   "1, '{\"tracker\": [], \"waiting\": [{\"start_ms\": 1}], \"since_fit\": 0}')");
  std::vector<UnreadablePassiveState> unreadable;
  const auto got = store->PassiveStates(unreadable);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 1u);
  ASSERT_EQ(unreadable.size(), 1u);
  EXPECT_NE(unreadable[0].Describe().find("passive_states row (device \"sdb\", op \"write\", "
                                          "size \"all\", source \"diskstats\"): expected"),
            std::string::npos)
      << unreadable[0].Describe();
  ASSERT_TRUE(store->QuarantinePassiveState(unreadable[0], kPassiveT0));
  unreadable.clear();
  EXPECT_EQ(store->PassiveStates(unreadable)->size(), 1u);
  EXPECT_TRUE(unreadable.empty());
  EXPECT_EQ(test_store::QueryInt(dir.Db(),
                                 "SELECT COUNT(*) FROM passive_states_quarantine WHERE device = "
                                 "'sdb' AND quarantined_unix_ms = 1800000000000"),
            1);
}

TEST(StorePassive, ADeviceTakenByAnotherDiskLosesItsStateAndWindows) {
  test_store::ScratchDir dir;
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store);
  const std::vector<StoredPassiveWindow> windows = {StoredAt(0, true)};
  const std::vector<StoredPassiveState> states = {SamplePassiveState()};
  ASSERT_TRUE(store->PutPassive(windows, {}, states));
  ASSERT_TRUE(store->DeletePassiveDevice("sda"));
  std::vector<UnreadablePassiveState> unreadable;
  EXPECT_TRUE(store->PassiveStates(unreadable)->empty());
  EXPECT_TRUE(store->PassiveWindows(0, kPassiveT0 * 2)->empty());
}

TEST(StorePassive, AResetForgetsTheDeviceAndIsSeenOnce) {
  test_store::ScratchDir dir;
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store);
  const std::vector<StoredPassiveWindow> windows = {StoredAt(0, true)};
  const std::vector<StoredPassiveState> states = {SamplePassiveState()};
  ASSERT_TRUE(store->PutPassive(windows, {}, states));
  const auto reset = store->ResetPassiveDevice("sda", kPassiveT0);
  ASSERT_TRUE(reset) << reset.error().ToString();
  EXPECT_EQ(*reset, 1);
  std::vector<UnreadablePassiveState> unreadable;
  EXPECT_TRUE(store->PassiveStates(unreadable)->empty());
  EXPECT_TRUE(store->PassiveWindows(0, kPassiveT0 * 2)->empty());
  const auto seen = store->PassiveResetsAfter(kPassiveT0 - 1);
  ASSERT_TRUE(seen);
  ASSERT_EQ(seen->size(), 1u);
  EXPECT_EQ((*seen)[0], std::make_pair(std::string("sda"), kPassiveT0));
  EXPECT_TRUE(store->PassiveResetsAfter(kPassiveT0)->empty());
}

TEST(StorePassive, AVersion9StoreGetsTheTables) {
  test_store::ScratchDir dir;
  ASSERT_TRUE(Store::Open(dir.Db()));
  test_store::Exec(dir.Db(),
                   std::string(test_store::kDropPassiveTables) + "PRAGMA user_version = 9");
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store) << store.error().ToString();
  EXPECT_EQ(test_store::QueryInt(dir.Db(), "PRAGMA user_version"), 11);
  const std::vector<StoredPassiveState> states = {SamplePassiveState()};
  EXPECT_TRUE(store->PutPassive({}, {}, states));
}

// A series' drift reference (its first day's windows, chosen later) is
// marked, read back oldest first, and kept by a prune that drops every other
// old window; a state stored before the drift watch reads as one without.
TEST(StorePassive, TheDriftReferenceIsKeptWhateverItsAge) {
  test_store::ScratchDir dir;
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store);
  std::vector<StoredPassiveWindow> windows;
  for (int i = 0; i < 10; ++i) {
    StoredPassiveWindow w;
    w.window = PassiveAt(i);
    w.reason = "learning";
    w.learned = true;
    windows.push_back(w);
  }
  ASSERT_TRUE(store->PutPassive(windows, {}, {}));
  std::vector<PassiveLearnedMark> marks;
  for (const int i : {1, 4, 7}) {
    marks.push_back({"sda", "read", "all", PassiveSource::kDevice, PassiveAt(i).end_ms, true});
  }
  ASSERT_TRUE(store->PutPassive({}, marks, {}));
  const auto reference =
      store->PassiveLearned("sda", "read", "all", PassiveSource::kDevice, 240, true);
  ASSERT_TRUE(reference);
  ASSERT_EQ(reference->size(), 3u);
  EXPECT_EQ((*reference)[0].end_ms, PassiveAt(1).end_ms);
  EXPECT_EQ((*reference)[2].end_ms, PassiveAt(7).end_ms);
  const auto deleted = store->PrunePassiveWindows(PassiveAt(9).end_ms + 1, 1);
  ASSERT_TRUE(deleted) << deleted.error().ToString();
  EXPECT_EQ(*deleted, 10 - 1 - 3);
  EXPECT_EQ(store->PassiveLearned("sda", "read", "all", PassiveSource::kDevice, 240, true)->size(),
            3u);
  test_store::Exec(dir.Db(),
                   "INSERT INTO passive_states VALUES ('sdb', 'write', 'all', 'diskstats', '', "
                   "1, '{\"tracker\": [], \"waiting\": [], \"since_fit\": 0}')");
  std::vector<UnreadablePassiveState> unreadable;
  const auto states = store->PassiveStates(unreadable);
  ASSERT_TRUE(states);
  EXPECT_TRUE(unreadable.empty());
  ASSERT_EQ(states->size(), 1u);
  EXPECT_EQ((*states)[0].state.drift, PassiveDriftState{});
}

}  // namespace
}  // namespace iowatch::probes
