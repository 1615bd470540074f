// ProbeRecorder on synthetic outcomes and a real store in a temporary state
// directory: what is stored, when a baseline is learned, when a regression is
// raised, and how a failing store is reported and recovers.
#include "daemon/scheduling/probe_recorder.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "probes/store/store.h"
#include "tests/unit/daemon/scheduling/probe_recorder_test_util.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

using iowatch::testing::TempDir;
using test_recorder::Contended;
using test_recorder::FindVerdict;
using test_recorder::Job;
using test_recorder::Options;
using test_recorder::Outcome;

// Options whose failed and quarantined stores count in `counters`.
ProbeRecorderOptions CountedOptions(const fs::path& dir, ProbeCounters& counters) {
  ProbeRecorderOptions o = Options(dir);
  o.counters = &counters;
  return o;
}

size_t StoredRuns(const fs::path& dir) {
  auto store = probes::Store::OpenInStateDir(dir);
  EXPECT_TRUE(store.has_value());
  auto runs = store->RecentRuns("", "", "", 1000);
  EXPECT_TRUE(runs.has_value());
  return runs ? runs->size() : 0;
}

TEST(ProbeRecorder, StoresOkAndErrorRunsButNeverCancelledOnes) {
  TempDir tmp;
  const fs::path state = tmp.path() / "state";  // created by the recorder
  const ScheduledJob job = Job("rr");
  ProbeRecorder recorder(Options(state), {"rr"});
  EXPECT_TRUE(recorder.Snapshot()->store_up);
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, 1000));
  recorder.Record(job, Outcome(job, RunResult::kCancelled, 100, 2000));
  RunOutcome error = Outcome(job, RunResult::kError, 100, 3000);
  error.error = "I/O error";
  recorder.Record(job, error);
  recorder.Record(job, RunOutcome::Of(RunResult::kSkipped, "busy"));
  EXPECT_EQ(StoredRuns(state), 2u);

  const auto snapshot = recorder.Snapshot();
  ASSERT_EQ(snapshot->jobs.size(), 1u);
  const ProbeJobSnapshot& j = snapshot->jobs[0];
  EXPECT_EQ(j.name, "rr");
  EXPECT_DOUBLE_EQ(j.last_run_timestamp_seconds, 1.0);  // the ok run, not the error
  EXPECT_DOUBLE_EQ(j.cpu_seconds, 0.03);
  ASSERT_EQ(j.clat.size(), 1u);
  EXPECT_EQ(j.clat[0].count, 200u);  // only the ok run is in the histogram
  EXPECT_FALSE(j.has_baseline);
  EXPECT_EQ(snapshot->store_errors_total, 0u);
}

TEST(ProbeRecorder, LearnsABaselineAfterNRunsAndRaisesARegressionAfterKBadOnes) {
  TempDir tmp;
  const ScheduledJob job = Job("rr");
  ProbeRecorder recorder(Options(tmp.path(), 3, 2), {"rr"});
  int64_t t = 1000;
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
  EXPECT_FALSE(recorder.Snapshot()->jobs[0].has_baseline);
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
  {
    const ProbeJobSnapshot& j = recorder.Snapshot()->jobs[0];
    ASSERT_TRUE(j.has_baseline);
    EXPECT_EQ(j.baseline_runs, 3);
    EXPECT_EQ(j.last_class.run_class, probes::RunClass::kClean);
    const ProbeVerdict* v = FindVerdict(j, "lat_mean_seconds");
    ASSERT_NE(v, nullptr);
    EXPECT_DOUBLE_EQ(v->verdict.ratio, 1.0);
    EXPECT_FALSE(v->regressed);
    // clat is kept, not judged.
    EXPECT_EQ(FindVerdict(j, "clat_mean_seconds"), nullptr);
  }
  // Ten times slower: one bad run is not enough, two are (hysteresis 2).
  recorder.Record(job, Outcome(job, RunResult::kOk, 1000, t += 1000, 20));
  EXPECT_FALSE(FindVerdict(recorder.Snapshot()->jobs[0], "lat_mean_seconds")->regressed);
  recorder.Record(job, Outcome(job, RunResult::kOk, 1000, t += 1000, 20));
  {
    const ProbeJobSnapshot& j = recorder.Snapshot()->jobs[0];
    const ProbeVerdict* v = FindVerdict(j, "lat_mean_seconds");
    ASSERT_NE(v, nullptr);
    EXPECT_TRUE(v->regressed);
    EXPECT_NEAR(v->verdict.ratio, 1001.0 / 101, 1e-9);
    // 20 I/Os carry no percentile: p50 needs 100.
    const ProbeVerdict* p50 = FindVerdict(j, "lat_p50_seconds");
    ASSERT_NE(p50, nullptr);
    EXPECT_FALSE(p50->verdict.judged);
    EXPECT_FALSE(p50->regressed);
    EXPECT_TRUE(FindVerdict(j, "iops")->regressed);
    EXPECT_EQ(j.clat[0].count, 3 * 200u + 2 * 20u);  // accumulated over every ok run
  }
  // Back to normal: two good runs clear it.
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
  EXPECT_FALSE(FindVerdict(recorder.Snapshot()->jobs[0], "lat_mean_seconds")->regressed);
}

// A raised regression explains itself: since its first bad run, against the
// runs its baseline was made of (when they ran, their load and steal) and
// under the judged run's own load and steal; published and in one journal
// line.
TEST(ProbeRecorder, ARaisedRegressionSaysSinceWhenAndAgainstWhat) {
  TempDir tmp;
  const ScheduledJob job = Job("rr");
  ProbeRecorder recorder(Options(tmp.path(), 3, 2), {"rr"});
  const auto with_steal = [](RunOutcome o, double steal) {
    o.conditions->cpu_steal = steal;
    return o;
  };
  test_recorder::CapturedLog log;
  recorder.Record(job, with_steal(Outcome(job, RunResult::kOk, 100, 2'000), 0.01));
  recorder.Record(job, with_steal(Outcome(job, RunResult::kOk, 100, 3'000), 0.03));
  recorder.Record(job, with_steal(Outcome(job, RunResult::kOk, 100, 4'000), 0.02));
  recorder.Record(job, with_steal(Outcome(job, RunResult::kOk, 1000, 5'000, 20), 0.04));
  recorder.Record(job, with_steal(Outcome(job, RunResult::kOk, 1000, 6'000, 20), 0.045));
  const ProbeJobSnapshot& j = recorder.Snapshot()->jobs[0];
  const ProbeVerdict* v = FindVerdict(j, "lat_mean_seconds");
  ASSERT_NE(v, nullptr);
  ASSERT_TRUE(v->regressed);
  EXPECT_EQ(v->since_ms, 5'000);  // the first bad run, not the one that raised it
  ASSERT_TRUE(j.judged_baseline_runs.has_value());
  EXPECT_EQ(j.judged_baseline_runs->runs, 3u);
  EXPECT_EQ(j.judged_baseline_runs->first_start_ms, 2'000);
  EXPECT_EQ(j.judged_baseline_runs->last_start_ms, 4'000);
  EXPECT_DOUBLE_EQ(j.judged_baseline_runs->cpu_steal.value_or(-1), 0.02);
  EXPECT_DOUBLE_EQ(j.judged_baseline_runs->foreign_load.value_or(-1), 0);
  ASSERT_TRUE(j.judged_load.has_value());
  EXPECT_DOUBLE_EQ(j.judged_load->cpu_steal, 0.045);
  EXPECT_FALSE(j.reference_runs.has_value());  // no first day yet
  const std::vector<std::string> raised = log.Findings();
  ASSERT_FALSE(raised.empty());
  const auto line = std::ranges::find_if(raised, [](const std::string& l) {
    return l.find("read lat_mean_seconds regressed") != std::string::npos;
  });
  ASSERT_NE(line, raised.end()) << ::testing::PrintToString(raised);
  EXPECT_NE(line->find("9.91x its baseline; bad since 1970-01-01T00:00:05Z; judged against 3 runs "
                       "of 1970-01-01T00:00:02Z to 1970-01-01T00:00:04Z (load 0/s, steal 2.0 %); "
                       "the judged run: load 0/s, steal 4.5 %"),
            std::string::npos)
      << *line;
  // Cleared: since goes back to 0.
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, 7'000));
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, 8'000));
  const ProbeVerdict* cleared = FindVerdict(recorder.Snapshot()->jobs[0], "lat_mean_seconds");
  EXPECT_FALSE(cleared->regressed);
  EXPECT_EQ(cleared->since_ms, 0);
}

// A run slowed by others' I/O is stored and shown, never judged
// against the clean baseline; runs of its load band learn a baseline of
// their own, which judges the next ones. Runs of unknown conditions are
// never judged.
TEST(ProbeRecorder, ContendedRunsAreJudgedOnlyWithinTheirLoadBand) {
  TempDir tmp;
  const ScheduledJob job = Job("rr");
  ProbeRecorder recorder(Options(tmp.path(), 3, 2), {"rr"});
  int64_t t = 1000;
  for (int i = 0; i < 3; ++i) recorder.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
  ASSERT_TRUE(recorder.Snapshot()->jobs[0].has_baseline);
  // Five times slower beside 3,000 foreign IOPS: not a regression.
  for (int i = 0; i < 3; ++i) {
    recorder.Record(job, Contended(job, 500, t += 1000, 3000));
    const ProbeJobSnapshot& j = recorder.Snapshot()->jobs[0];
    EXPECT_EQ(j.last_class.run_class, probes::RunClass::kContended);
    EXPECT_EQ(j.last_class.band, 7);
    for (const ProbeVerdict& v : j.verdicts) EXPECT_FALSE(v.regressed) << v.verdict.metric;
  }
  // The third contended run learned band 7's baseline; the next is judged
  // against it.
  recorder.Record(job, Contended(job, 500, t += 1000, 3000));
  {
    const ProbeJobSnapshot& j = recorder.Snapshot()->jobs[0];
    EXPECT_TRUE(j.last_judged);
    EXPECT_EQ(j.baseline_band, 7);
    ASSERT_NE(FindVerdict(j, "lat_mean_seconds"), nullptr);
    EXPECT_DOUBLE_EQ(FindVerdict(j, "lat_mean_seconds")->verdict.ratio, 1.0);
  }
  // A clean run again is judged against the clean baseline.
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
  EXPECT_EQ(recorder.Snapshot()->jobs[0].baseline_band, 0);
  EXPECT_TRUE(recorder.Snapshot()->jobs[0].last_judged);
  auto store = probes::Store::OpenInStateDir(tmp.path());
  ASSERT_TRUE(store);
  EXPECT_EQ(store->ListBaselines()->size(), 2u);
  EXPECT_EQ(StoredRuns(tmp.path()), 8u);
}

// A run that is not judged (contended, its band without a baseline) leaves
// the last judged verdicts and baseline published, regression included: the
// series do not vanish and the alert does not reset.
TEST(ProbeRecorder, ARunNotJudgedKeepsTheRegressionPublished) {
  TempDir tmp;
  const ScheduledJob job = Job("rr");
  ProbeRecorder recorder(Options(tmp.path(), 3, 2), {"rr"});
  int64_t t = 1000;
  for (int i = 0; i < 3; ++i) recorder.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
  for (int i = 0; i < 2; ++i) recorder.Record(job, Outcome(job, RunResult::kOk, 1000, t += 1000));
  ASSERT_TRUE(FindVerdict(recorder.Snapshot()->jobs[0], "lat_mean_seconds")->regressed);
  recorder.Record(job, Contended(job, 5000, t += 1000, 3000));
  const ProbeJobSnapshot& j = recorder.Snapshot()->jobs[0];
  EXPECT_FALSE(j.last_judged);
  EXPECT_TRUE(j.has_baseline);
  EXPECT_EQ(j.baseline_band, 0);
  const ProbeVerdict* v = FindVerdict(j, "lat_mean_seconds");
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->regressed);
  EXPECT_NEAR(v->verdict.ratio, 1001.0 / 101, 1e-9);  // the last judged run's
}

// One figure of a run's metrics, NaN when absent.
double Figure(const std::vector<probes::MetricSample>& metrics, const std::string& metric) {
  for (const probes::MetricSample& m : metrics) {
    if (m.op == "read" && m.metric == metric) return m.value;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

// The fleet rules' peer input on a busy disk: the last clean run's figures
// and start stay published across the contended runs (and a run of unknown
// conditions) after it, and move at the next clean one.
TEST(ProbeRecorder, TheLastUncontendedRunOutlivesContendedOnes) {
  TempDir tmp;
  const ScheduledJob job = Job("rr");
  ProbeRecorder recorder(Options(tmp.path(), 3, 2), {"rr"});
  EXPECT_TRUE(recorder.Snapshot()->jobs[0].uncontended_metrics.empty());
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, 2000));
  {
    const ProbeJobSnapshot& j = recorder.Snapshot()->jobs[0];
    EXPECT_DOUBLE_EQ(j.uncontended_run_timestamp_seconds, 2.0);
    EXPECT_NEAR(Figure(j.uncontended_metrics, "lat_mean_seconds"), 101e-6, 1e-12);
  }
  recorder.Record(job, Contended(job, 500, 3000, 3000));
  recorder.Record(job, Contended(job, 700, 4000, 3000));
  RunOutcome unknown = Outcome(job, RunResult::kOk, 900, 5000);
  unknown.conditions.reset();
  recorder.Record(job, unknown);
  {
    const ProbeJobSnapshot& j = recorder.Snapshot()->jobs[0];
    EXPECT_DOUBLE_EQ(j.last_run_timestamp_seconds, 5.0);
    EXPECT_NEAR(Figure(j.last_metrics, "lat_mean_seconds"), 901e-6, 1e-12);
    EXPECT_DOUBLE_EQ(j.uncontended_run_timestamp_seconds, 2.0);
    EXPECT_NEAR(Figure(j.uncontended_metrics, "lat_mean_seconds"), 101e-6, 1e-12);
    EXPECT_NEAR(Figure(j.uncontended_metrics, "iops"), Figure(j.last_metrics, "iops"), 1e-9);
  }
  recorder.Record(job, Outcome(job, RunResult::kOk, 200, 6000));
  const ProbeJobSnapshot& j = recorder.Snapshot()->jobs[0];
  EXPECT_DOUBLE_EQ(j.uncontended_run_timestamp_seconds, 6.0);
  EXPECT_NEAR(Figure(j.uncontended_metrics, "lat_mean_seconds"), 201e-6, 1e-12);
}

TEST(ProbeRecorder, RunsOfUnknownConditionsAreNeverJudged) {
  TempDir tmp;
  const ScheduledJob job = Job("rr");
  ProbeRecorder recorder(Options(tmp.path(), 1, 1), {"rr"});
  RunOutcome unknown = Outcome(job, RunResult::kOk, 100, 1000);
  unknown.conditions.reset();
  recorder.Record(job, unknown);
  const ProbeJobSnapshot& j = recorder.Snapshot()->jobs[0];
  EXPECT_EQ(j.last_class.run_class, probes::RunClass::kUnknown);
  EXPECT_FALSE(j.has_baseline);
  EXPECT_FALSE(j.last_judged);
  EXPECT_NE(j.last_not_judged.find("conditions are unknown"), std::string::npos);
}

// Adversarial review: the learner took the first runs ever, which
// outlive a reset, so a reset job (a replaced disk with the same major:minor)
// got its old baseline back. It learns from the runs after the reset.
TEST(ProbeRecorder, ABaselineResetElsewhereIsLearnedFromLaterRuns) {
  TempDir tmp;
  const ScheduledJob job = Job("rr");
  ProbeRecorder recorder(Options(tmp.path(), 1, 1), {"rr"});
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, 1000));
  ASSERT_TRUE(recorder.Snapshot()->jobs[0].has_baseline);
  {
    auto store = probes::Store::OpenInStateDir(tmp.path());  // as `iowatch baseline reset rr`
    ASSERT_TRUE(store.has_value());
    ASSERT_EQ(store->DeleteBaselines("rr").value_or(0), 1);
  }
  // The next run reads the store again, finds no baseline and learns one
  // (runs: 1) from itself, not from the 100 µs run before the reset: its own
  // 1000 µs is no regression against it.
  recorder.Record(job, Outcome(job, RunResult::kOk, 1000, 2000));
  const ProbeJobSnapshot& j = recorder.Snapshot()->jobs[0];
  ASSERT_TRUE(j.has_baseline);
  const ProbeVerdict* v = FindVerdict(j, "lat_mean_seconds");
  ASSERT_NE(v, nullptr);
  EXPECT_FALSE(v->regressed);
  EXPECT_NEAR(v->verdict.ratio, 1.0, 1e-9);
}

TEST(ProbeRecorder, KeepsTheP99OfTheLastRunsForTheStatusPage) {
  TempDir tmp;
  const ScheduledJob job = Job("rr");
  ProbeRecorder recorder(Options(tmp.path()), {"rr"});
  const size_t runs = kRecentRuns + 5;
  for (size_t i = 0; i < runs; ++i) {
    recorder.Record(job, Outcome(job, RunResult::kOk, 100 + static_cast<double>(i),
                                 static_cast<int64_t>(1000 * (i + 1))));
  }
  recorder.Record(job, Outcome(job, RunResult::kError, 5000, 999'000));  // not a successful run
  const auto s = recorder.Snapshot();
  ASSERT_EQ(s->jobs[0].recent.size(), 1u);
  const ProbeRecentSeries& series = s->jobs[0].recent[0];
  EXPECT_EQ(series.op, "read");
  ASSERT_EQ(series.clat_p99_seconds.size(), kRecentRuns);
  // Oldest first: the first 5 runs dropped; every run's clat is one value, so p99 is that
  // value within the histogram's 1/128.
  EXPECT_NEAR(series.clat_p99_seconds.front(), 105e-6, 105e-6 / 128);
  EXPECT_NEAR(series.clat_p99_seconds.back(), (100.0 + runs - 1) * 1e-6, 153e-6 / 128);
}

TEST(ProbeRecorder, AFailingStoreIsCountedAndRecovers) {
  TempDir tmp;
  // A regular file where the state directory should be: nothing can be created under it.
  const fs::path blocker = tmp.path() / "blocker";
  std::ofstream(blocker) << "x";
  const fs::path state = blocker / "state";
  const ScheduledJob job = Job("rr");
  ProbeRecorder recorder(Options(state), {"rr"});
  EXPECT_FALSE(recorder.Snapshot()->store_up);
  EXPECT_EQ(recorder.Snapshot()->store_errors_total, 0u);
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, 1000));
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, 2000));
  {
    const auto s = recorder.Snapshot();
    EXPECT_FALSE(s->store_up);
    EXPECT_EQ(s->store_errors_total, 2u);
    EXPECT_DOUBLE_EQ(s->jobs[0].last_run_timestamp_seconds, 2.0);  // still published
  }
  fs::remove(blocker);  // space returns
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, 3000));
  const auto s = recorder.Snapshot();
  EXPECT_TRUE(s->store_up);
  EXPECT_EQ(s->store_errors_total, 2u);
  EXPECT_EQ(StoredRuns(state), 1u);
}

// A store that is not a database (a disk error, a torn copy) is moved aside
// with a timestamp and a new one started: the daemon keeps recording, the old
// bytes stay for the operator. A foreign database is never moved.
TEST(ProbeRecorder, ADamagedStoreIsMovedAsideAndANewOneStarted) {
  TempDir tmp;
  const fs::path state = tmp.path() / "state";
  fs::create_directories(state);
  const std::string garbage(8192, 'x');
  std::ofstream(state / "iowatch.db") << garbage;
  ProbeCounters counters;
  const ScheduledJob job = Job("rr");
  ProbeRecorder recorder(CountedOptions(state, counters), {"rr"});
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, 1000));
  EXPECT_TRUE(recorder.Snapshot()->store_up);
  EXPECT_EQ(counters.StoresQuarantined(), 1u);
  EXPECT_EQ(StoredRuns(state), 1u);
  // wall_ms is 1,700,000,000,000: 2023-11-14 22:13:20 UTC.
  const fs::path moved = state / "iowatch.db.corrupt-20231114T221320Z";
  std::ifstream in(moved);
  const std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, garbage) << "the damaged file is kept as it was";
}

// `rm` or `truncate -s0` of iowatch.db under the daemon
// left store_up at 1 with nothing logged while SQLite wrote every later run
// into the removed or truncated file, all of them lost at the next start.
// The recorder checks the file before each run: a removed or replaced file
// is closed and the store at the path opened (created) again, a truncated
// one moved aside as damaged; the run is stored in the new one.
TEST(ProbeRecorder, AStoreRemovedOrTruncatedUnderItIsNoticedAndNoRunIsLost) {
  for (const bool truncate : {false, true}) {
    TempDir tmp;
    const fs::path state = tmp.path() / "state";
    ProbeCounters counters;
    const ScheduledJob job = Job("rr");
    ProbeRecorder recorder(CountedOptions(state, counters), {"rr"});
    recorder.Record(job, Outcome(job, RunResult::kOk, 100, 1000));
    ASSERT_EQ(StoredRuns(state), 1u);
    if (truncate) {
      ASSERT_EQ(::truncate((state / "iowatch.db").c_str(), 0), 0);
    } else {
      fs::remove(state / "iowatch.db");
    }
    recorder.Record(job, Outcome(job, RunResult::kOk, 100, 2000));
    recorder.Record(job, Outcome(job, RunResult::kOk, 100, 3000));
    EXPECT_TRUE(recorder.Snapshot()->store_up) << truncate;
    EXPECT_EQ(counters.StoreErrors(), 0u) << truncate;
    EXPECT_EQ(counters.StoresQuarantined(), truncate ? 1u : 0u);
    EXPECT_EQ(StoredRuns(state), 2u)
        << truncate << ": the runs after it are in the file at the path";
  }
}

TEST(ProbeRecorder, AForeignDatabaseIsRefusedNotMoved) {
  TempDir tmp;
  const fs::path state = tmp.path() / "state";
  fs::create_directories(state);
  const fs::path db = state / "iowatch.db";
  sqlite3* foreign = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &foreign), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(foreign, "CREATE TABLE theirs(x); INSERT INTO theirs VALUES (1);", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(foreign);
  const auto bytes = [&db] {
    std::ifstream in(db, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string before = bytes();
  ProbeCounters counters;
  const ScheduledJob job = Job("rr");
  ProbeRecorder recorder(CountedOptions(state, counters), {"rr"});
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, 1000));
  EXPECT_FALSE(recorder.Snapshot()->store_up);
  EXPECT_EQ(counters.StoresQuarantined(), 0u);
  EXPECT_EQ(bytes(), before) << "refused untouched";
  for (const auto& entry : fs::directory_iterator(state)) {
    EXPECT_EQ(entry.path().filename().string().find("corrupt"), std::string::npos);
  }
}

// The wall clock set a year forwards (retention 30 days): no run may be
// pruned for it, whether the jump happens while the daemon runs or before
// it starts; pruning follows the monotonic time that really passed.
struct Clocks {
  int64_t wall = 1'700'000'000'000;
  int64_t steady = 0;
};
constexpr int64_t kDay = 24LL * 3600 * 1000;

ProbeRecorderOptions ClockedOptions(const fs::path& dir, Clocks& clocks) {
  // No baseline is learned from these few runs: it would keep its runs.
  ProbeRecorderOptions o = Options(dir, 10);
  o.wall_ms = [&clocks] { return clocks.wall; };
  o.steady_ms = [&clocks] { return clocks.steady; };
  o.retention = milliseconds(30 * kDay);
  return o;
}

TEST(ProbeRecorder, AWallClockSetAYearForwardsPrunesNothing) {
  TempDir tmp;
  Clocks clocks;
  const ScheduledJob job = Job("rr");
  ProbeRecorder recorder(ClockedOptions(tmp.path(), clocks), {"rr"});
  const int64_t before = clocks.wall;
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, before));
  clocks.wall += 365 * kDay;
  clocks.steady += 2 * kDay;  // a prune is due
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, clocks.wall));
  EXPECT_EQ(StoredRuns(tmp.path()), 2u) << "the run from before the jump is kept";
  // 31 days later by the monotonic clock the first run is past the retention.
  clocks.steady += 31 * kDay;
  clocks.wall += 31 * kDay;
  recorder.Record(job, Outcome(job, RunResult::kOk, 100, clocks.wall));
  EXPECT_EQ(StoredRuns(tmp.path()), 2u) << "pruned once a month had really passed";
}

TEST(ProbeRecorder, ADaemonStartedWithTheClockAYearAheadPrunesNothing) {
  TempDir tmp;
  Clocks clocks;
  const ScheduledJob job = Job("rr");
  {
    ProbeRecorder recorder(ClockedOptions(tmp.path(), clocks), {"rr"});
    recorder.Record(job, Outcome(job, RunResult::kOk, 100, clocks.wall));
  }
  clocks.wall += 365 * kDay;
  ProbeRecorder restarted(ClockedOptions(tmp.path(), clocks), {"rr"});
  restarted.Record(job, Outcome(job, RunResult::kOk, 100, clocks.wall));
  EXPECT_EQ(StoredRuns(tmp.path()), 2u);
}

}  // namespace
}  // namespace iowatch::daemon
