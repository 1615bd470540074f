// series_states: a series' verdict state (hysteresis, suspect spans) stored
// and read back whole, a malformed row named and moved aside alone, a
// version-6 store migrated.
#include <gtest/gtest.h>

#include <optional>

#include "probes/store/store.h"
#include "probes/store/store_schema.h"
#include "tests/unit/probes/store/store_test_util.h"

namespace iowatch::probes {
namespace {

StoredSeriesState SampleState() {
  StoredSeriesState s;
  s.job = "randread";
  s.fingerprint = "fp1";
  s.device = "8:0";
  s.through_run_id = 42;
  s.state.tracker = RegressionTracker(3);
  MetricVerdict bad;
  bad.op = "read";
  bad.metric = "iops";
  bad.value = 50;
  bad.baseline = 100;
  bad.threshold = 20;
  bad.bad = true;
  const std::vector<MetricVerdict> run = {bad};
  // Raised (since the first bad run, at 1 s), then one more bad (a streak since its start, 4 s).
  for (int i = 1; i <= 4; ++i) s.state.tracker.Update(run, 1000 * i, 1000 * i + 500);
  s.state.baseline_ids = {3, 9};
  s.state.suspect_since_ms = 1'700'000'000'000;
  s.state.suspect_spans = {{1'600'000'000'000, 1'600'000'060'000}};
  DriftWatch::Evidence drifted;
  drifted.worse = 30.5;
  drifted.level = 0.14;
  drifted.runs = 400;
  drifted.raised = true;
  drifted.since_ms = 1'650'000'000'000;
  drifted.raised_ms = 1'650'100'000'000;
  drifted.step = 2.5;
  drifted.step_runs = 2;
  drifted.step_shift = 0.61;
  drifted.step_since_ms = 1'650'000'900'000;
  drifted.calibration_runs = 288;
  drifted.calibration_sum = -12.25;
  drifted.calibration_sum_sq = 301.5;
  drifted.contended_runs = 40;
  drifted.contended_sum = 3.5;
  drifted.contended_sum_sq = 61.25;
  s.state.drift.Restore({5, 6, 7}, 1'500'000'000'000, 1'500'300'000'000,
                        {{{"read", "iops"}, drifted}});
  return s;
}

TEST(StoreSeriesStates, AStateIsReadBackWhole) {
  test_store::ScratchDir dir;
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store) << store.error().ToString();
  StoredSeriesState fresh = SampleState();
  fresh.job = "other";
  fresh.state.tracker = RegressionTracker(3);  // nothing seen: no shift (JSON null)
  ASSERT_TRUE(store->PutSeriesState(SampleState()));
  ASSERT_TRUE(store->PutSeriesState(fresh));
  StoredSeriesState newer = SampleState();
  newer.through_run_id = 43;
  ASSERT_TRUE(store->PutSeriesState(newer));  // replaces
  std::vector<UnreadableSeriesState> unreadable;
  const auto states = store->SeriesStates(RegressionTracker(3), unreadable);
  ASSERT_TRUE(states) << states.error().ToString();
  ASSERT_EQ(states->size(), 2u);
  EXPECT_TRUE(unreadable.empty());
  const StoredSeriesState& got = (*states)[1];
  EXPECT_EQ(got.job, "randread");
  EXPECT_EQ(got.through_run_id, 43);
  EXPECT_EQ(got.state.tracker.Entries(), SampleState().state.tracker.Entries());
  EXPECT_TRUE(got.state.tracker.Regressed("read", "iops"));
  EXPECT_EQ(got.state.baseline_ids, SampleState().state.baseline_ids);
  EXPECT_EQ(got.state.suspect_since_ms, SampleState().state.suspect_since_ms);
  EXPECT_EQ(got.state.suspect_spans, SampleState().state.suspect_spans);
  EXPECT_EQ(got.state.drift, SampleState().state.drift);  // a drift stands across restarts
  EXPECT_TRUE(got.state.Regressed("read", "iops"));
  EXPECT_TRUE((*states)[0].state.tracker.Entries().empty());
  ASSERT_TRUE(store->DeleteSeriesState("randread", "fp1", "8:0"));
  EXPECT_EQ(store->SeriesStates(RegressionTracker(3), unreadable)->size(), 1u);
}

// One malformed row (of a job no longer configured, say) used to fail the
// whole read: every series lost its verdict state at every start.
TEST(StoreSeriesStates, AMalformedRowCostsOnlyItsOwnSeries) {
  test_store::ScratchDir dir;
  {
    Result<Store> store = Store::OpenInStateDir(dir.Path());
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->PutSeriesState(SampleState()));
  }
  test_store::Exec(dir.Db(),
                   "INSERT INTO series_states VALUES ('gh\x1b[2Jost', 'fp', '7:0', 1, '{not json');"
                   "INSERT INTO series_states VALUES ('zz', 'fp', '9:0', 2, '{\"tracker\": 7}')");
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store);
  std::vector<UnreadableSeriesState> unreadable;
  const auto states = store->SeriesStates(RegressionTracker(3), unreadable);
  ASSERT_TRUE(states) << states.error().ToString();
  ASSERT_EQ(states->size(), 1u);
  EXPECT_EQ((*states)[0].job, "randread");
  EXPECT_TRUE((*states)[0].state.tracker.Regressed("read", "iops"));
  ASSERT_EQ(unreadable.size(), 2u);
  EXPECT_EQ(unreadable[0].job, "gh\x1b[2Jost");  // raw, as stored
  EXPECT_EQ(unreadable[1].job, "zz");
  EXPECT_EQ(unreadable[1].device, "9:0");
  EXPECT_NE(unreadable[1].Describe().find(
                "series_states row (job \"zz\", fingerprint \"fp\", device \"9:0\"): expected "
                "the verdict state's JSON ({\"tracker\": [...], "),
            std::string::npos)
      << unreadable[1].Describe();
}

// SampleState() stored, then edited in place by `update` (SQL on the
// series_states table, as an older iowatch would have left the row), and
// read back: the one state, none when it was not read back alone.
std::optional<SeriesState> StoredThenEdited(const std::string& update) {
  test_store::ScratchDir dir;
  {
    Result<Store> store = Store::OpenInStateDir(dir.Path());
    if (!store || !store->PutSeriesState(SampleState())) return std::nullopt;
  }
  test_store::Exec(dir.Db(), update);
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  if (!store) return std::nullopt;
  std::vector<UnreadableSeriesState> unreadable;
  auto states = store->SeriesStates(RegressionTracker(3), unreadable);
  if (!states || states->size() != 1u || !unreadable.empty()) return std::nullopt;
  return std::move((*states)[0].state);
}

TEST(StoreSeriesStates, ADriftStoredBeforeItsCalibrationStartsAfresh) {
  // A state written before the drift watch calibrated its reference: its
  // evidence was judged against the uncalibrated reference, so it is not
  // carried on; the rest of the state is.
  const std::optional<SeriesState> state = StoredThenEdited(
      "UPDATE series_states SET state_json = "
      "json_remove(state_json, '$.drift.calibrate_until_ms')");
  ASSERT_TRUE(state);
  EXPECT_TRUE(state->tracker.Regressed("read", "iops"));
  EXPECT_TRUE(state->drift.Reference().empty());
  EXPECT_FALSE(state->drift.AnyRaised());
}

TEST(StoreSeriesStates, ADriftStoredBeforeContendedRunsWereCalibratedHasNone) {
  // A state written before the calibration kept its contended runs apart:
  // the drift reads back whole, with none (its contended runs then feed the
  // step only after a new calibration).
  const std::optional<SeriesState> state = StoredThenEdited(
      "UPDATE series_states SET state_json = json_remove(state_json, "
      "'$.drift.evidence[0].contended_runs', '$.drift.evidence[0].contended_sum', "
      "'$.drift.evidence[0].contended_sum_sq')");
  ASSERT_TRUE(state);
  ASSERT_TRUE(state->drift.All().contains({"read", "iops"}));
  const DriftWatch::Evidence& e = state->drift.All().at({"read", "iops"});
  EXPECT_EQ(e.contended_runs, 0u);
  EXPECT_EQ(e.contended_sum, 0);
  EXPECT_EQ(e.calibration_runs, 288u);
  EXPECT_TRUE(state->drift.Raised("read", "iops"));
}

TEST(StoreSeriesStates, AnUnreadableRowIsMovedToTheQuarantineWhole) {
  test_store::ScratchDir dir;
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->PutSeriesState(SampleState()));
  test_store::Exec(dir.Db(),
                   "INSERT INTO series_states VALUES ('ghost', 'fp', '7:0', 5, '{not json')");
  std::vector<UnreadableSeriesState> unreadable;
  ASSERT_TRUE(store->SeriesStates(RegressionTracker(3), unreadable));
  ASSERT_EQ(unreadable.size(), 1u);
  ASSERT_TRUE(store->QuarantineSeriesState(unreadable[0], 1'700'000'000'000));
  unreadable.clear();
  const auto states = store->SeriesStates(RegressionTracker(3), unreadable);
  ASSERT_TRUE(states);
  EXPECT_TRUE(unreadable.empty());
  EXPECT_EQ(states->size(), 1u);  // the readable one stays
  EXPECT_EQ(
      test_store::QueryInt(dir.Db(),
                           "SELECT COUNT(*) FROM series_states_quarantine WHERE job = 'ghost' "
                           "AND fingerprint = 'fp' AND device = '7:0' AND through_run_id = 5 "
                           "AND state_json = '{not json' AND quarantined_unix_ms = "
                           "1700000000000 AND reason LIKE '%parse error%'"),
      1);
}

TEST(StoreSeriesStates, AVersion6StoreGetsTheTables) {
  test_store::ScratchDir dir;
  ASSERT_TRUE(Store::Open(dir.Db()));
  test_store::Exec(dir.Db(),
                   "DROP TABLE run_verdicts; DROP TABLE series_states; "
                   "DROP TABLE series_states_quarantine; " +
                       std::string(test_store::kDropPassiveTables) + "PRAGMA user_version = 6");
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store) << store.error().ToString();
  EXPECT_EQ(test_store::QueryInt(dir.Db(), "PRAGMA user_version"),
            internal::StoreMigrations().back().version);
  std::vector<UnreadableSeriesState> unreadable;
  EXPECT_TRUE(store->SeriesStates(RegressionTracker(3), unreadable)->empty());
  EXPECT_TRUE(store->PutSeriesState(SampleState()));
  EXPECT_TRUE(store->RunVerdictsSince(0)->empty());
}

TEST(StoreRunVerdicts, JudgedOrWhyNotPerRunPrunedWithTheRun) {
  test_store::ScratchDir dir;
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store);
  const auto old_run = store->AddRun(test_store::SeriesRun("a", "8:0", 1000));
  const auto a = store->AddRun(test_store::SeriesRun("a", "8:0", 5000));
  const auto b = store->AddRun(test_store::SeriesRun("b", "8:0", 6000));
  const auto a2 = store->AddRun(test_store::SeriesRun("a", "8:0", 7000));
  ASSERT_TRUE(old_run && a && b && a2);
  ASSERT_TRUE(store->PutRunVerdict(*old_run, true, "judged"));
  ASSERT_TRUE(store->PutRunVerdict(*a, false, "learning"));
  ASSERT_TRUE(store->PutRunVerdict(*b, true, "judged"));
  ASSERT_TRUE(store->PutRunVerdict(*a2, false, "cpu_contended"));
  const auto since = store->RunVerdictsSince(5000);
  ASSERT_TRUE(since) << since.error().ToString();
  const std::vector<StoredRunVerdict> want = {{"a", 5000, false, "learning"},
                                              {"b", 6000, true, "judged"},
                                              {"a", 7000, false, "cpu_contended"}};
  EXPECT_EQ(*since, want);
  const auto last = store->LastJudgedRuns();
  ASSERT_TRUE(last);
  const std::vector<std::pair<std::string, int64_t>> want_last = {{"a", 1000}, {"b", 6000}};
  EXPECT_EQ(*last, want_last);
  ASSERT_TRUE(store->PruneRunsBefore(2000));
  EXPECT_EQ(test_store::QueryInt(dir.Db(), "SELECT COUNT(*) FROM run_verdicts"), 3);
}

// A series' state and the verdicts of the runs it went through are stored
// together or not at all: a kill between them would leave runs whose
// verdicts are stored judged again (counted twice), or runs that are never
// judged again without one.
TEST(StoreRunVerdicts, AStateAndItsRunsVerdictsAreStoredTogetherOrNotAtAll) {
  test_store::ScratchDir dir;
  Result<Store> store = Store::OpenInStateDir(dir.Path());
  ASSERT_TRUE(store);
  const auto a = store->AddRun(test_store::SeriesRun("randread", "8:0", 5000));
  const auto b = store->AddRun(test_store::SeriesRun("randread", "8:0", 6000));
  ASSERT_TRUE(a && b);
  StoredSeriesState state = SampleState();
  state.through_run_id = *b;
  const std::vector<RunVerdictRow> verdicts = {{*a, false, "learning"}, {*b, true, "judged"}};
  ASSERT_TRUE(store->PutSeriesState(state, verdicts));
  const std::vector<StoredRunVerdict> want = {{"randread", 5000, false, "learning"},
                                              {"randread", 6000, true, "judged"}};
  EXPECT_EQ(*store->RunVerdictsSince(0), want);
  // A verdict that cannot be stored (its run is gone): the state and the
  // verdicts stored before it in the same call stay as they were.
  StoredSeriesState later = state;
  later.through_run_id = *b + 1;
  const std::vector<RunVerdictRow> broken = {{*a, true, "judged"}, {*b + 1, true, "judged"}};
  EXPECT_FALSE(store->PutSeriesState(later, broken));
  std::vector<UnreadableSeriesState> unreadable;
  const auto states = store->SeriesStates(RegressionTracker(3), unreadable);
  ASSERT_TRUE(states) << states.error().ToString();
  ASSERT_EQ(states->size(), 1u);
  EXPECT_EQ((*states)[0].through_run_id, *b);
  EXPECT_EQ(*store->RunVerdictsSince(0), want);
  EXPECT_EQ(test_store::QueryInt(dir.Db(), "SELECT COUNT(*) FROM run_verdicts"), 2);
}

}  // namespace
}  // namespace iowatch::probes
