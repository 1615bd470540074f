// ProbeRecorder across restarts and job edits (issue 27): a standing
// regression and the suspect spans survive a restart, the runs a kill left
// without their verdict are judged again, and an edited job's old series no
// longer keeps its disk from learning.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "daemon/scheduling/probe_recorder.h"
#include "probes/baseline/run_metrics.h"
#include "probes/spec/job_spec.h"
#include "probes/store/store.h"
#include "tests/unit/daemon/scheduling/probe_recorder_test_util.h"
#include "tests/unit/probes/store/store_test_util.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

using iowatch::testing::TempDir;
using test_recorder::Contended;
using test_recorder::FindVerdict;
using test_recorder::Job;
using test_recorder::Options;
using test_recorder::Outcome;

bool Regressed(const ProbeRecorder& recorder) {
  const ProbeVerdict* v = FindVerdict(recorder.Snapshot()->jobs[0], "lat_mean_seconds");
  return v != nullptr && v->regressed;
}

TEST(ProbeRecorderRestart, AStandingRegressionIsNotRaisedAgainFromScratch) {
  TempDir tmp;
  const ScheduledJob job = Job("rr");
  int64_t t = 1000;
  {
    ProbeRecorder first(Options(tmp.path(), 3, 2), {"rr"});
    for (int i = 0; i < 3; ++i) first.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
    for (int i = 0; i < 2; ++i) first.Record(job, Outcome(job, RunResult::kOk, 1000, t += 1000));
    ASSERT_TRUE(Regressed(first));
  }
  ProbeRecorder second(Options(tmp.path(), 3, 2), {"rr"});
  // One bad run after the restart shows the regression still standing: it
  // did not need K bad runs again.
  second.Record(job, Outcome(job, RunResult::kOk, 1000, t += 1000));
  EXPECT_TRUE(Regressed(second));
  // And one good run does not clear it (K = 2).
  second.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
  EXPECT_TRUE(Regressed(second));
  second.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
  EXPECT_FALSE(Regressed(second));
}

// A slow disk must not become the norm of a band that learns after a
// restart from the stored runs of the suspect span.
TEST(ProbeRecorderRestart, NoBandLearnsFromTheSuspectSpanAfterARestart) {
  TempDir tmp;
  const ScheduledJob job = Job("rr");
  int64_t t = 1000;
  {
    ProbeRecorder first(Options(tmp.path(), 3, 3), {"rr"});
    for (int i = 0; i < 3; ++i) first.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
    first.Record(job, Outcome(job, RunResult::kOk, 1000, t += 1000));  // bad: suspect
    // Slow runs beside 3,000 foreign IOPS: band 7 has no baseline yet.
    for (int i = 0; i < 3; ++i) first.Record(job, Contended(job, 5000, t += 1000, 3000));
    EXPECT_FALSE(first.Snapshot()->jobs[0].last_judged);
  }
  ProbeRecorder second(Options(tmp.path(), 3, 3), {"rr"});
  second.Record(job, Contended(job, 5000, t += 1000, 3000));
  const ProbeJobSnapshot& j = second.Snapshot()->jobs[0];
  EXPECT_FALSE(j.last_judged);
  EXPECT_NE(j.last_not_judged.find("has no baseline yet (0 of 3 runs"), std::string::npos)
      << j.last_not_judged;
}

// A kill between storing a run and storing its series' state: the next
// start judges that run again before the next one.
TEST(ProbeRecorderRestart, ARunStoredWithoutItsVerdictIsJudgedAgain) {
  TempDir tmp;
  const ScheduledJob job = Job("rr");
  int64_t t = 1000;
  {
    ProbeRecorder first(Options(tmp.path(), 3, 2), {"rr"});
    for (int i = 0; i < 3; ++i) first.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
    first.Record(job, Outcome(job, RunResult::kOk, 1000, t += 1000));  // one bad of two
  }
  {
    // The run the killed daemon stored but never judged: the second bad one.
    auto store = probes::Store::OpenInStateDir(tmp.path());
    ASSERT_TRUE(store);
    const RunOutcome bad = Outcome(job, RunResult::kOk, 1000, t += 1000);
    probes::RunRecord run;
    run.job = job.name;
    run.fingerprint = probes::JobFingerprint(bad.probe->spec);
    run.device = "8:0";
    run.start_unix_ms = bad.start_unix_ms;
    run.ok = true;
    run.result = *bad.probe;
    run.metrics = probes::ExtractMetrics(*bad.probe);
    run.conditions = bad.conditions;
    ASSERT_TRUE(store->AddRun(run));
  }
  ProbeRecorder second(Options(tmp.path(), 3, 2), {"rr"});
  // Two bad runs raised it; this good one is the first of two that clear it.
  second.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
  EXPECT_TRUE(Regressed(second));
}

TEST(ProbeRecorderRestart, AnEditedJobsOldSeriesNoLongerStopsItsDiskFromLearning) {
  TempDir tmp;
  ScheduledJob job = Job("rr");
  ProbeRecorder recorder(Options(tmp.path(), 3, 2), {"rr"});
  int64_t t = 1000;
  for (int i = 0; i < 3; ++i) recorder.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
  for (int i = 0; i < 2; ++i) recorder.Record(job, Outcome(job, RunResult::kOk, 1000, t += 1000));
  ASSERT_TRUE(Regressed(recorder));
  job.spec.block_size = 8192;  // edited: a new series on the same disk
  for (int i = 0; i < 3; ++i) recorder.Record(job, Outcome(job, RunResult::kOk, 200, t += 1000));
  const ProbeJobSnapshot& j = recorder.Snapshot()->jobs[0];
  EXPECT_TRUE(j.has_baseline) << j.last_not_judged;
  EXPECT_TRUE(j.last_judged);
  EXPECT_FALSE(Regressed(recorder));
  auto store = probes::Store::OpenInStateDir(tmp.path());
  ASSERT_TRUE(store);
  std::vector<probes::UnreadableSeriesState> unreadable;
  // The old series' state is gone.
  EXPECT_EQ(store->SeriesStates(probes::RegressionTracker(2), unreadable)->size(), 1u);
}

// One malformed series_states row, of a job no longer configured, used to
// throw away every series' state at every start (standing regressions
// included), and stayed in the store to do so again.
TEST(ProbeRecorderRestart, AMalformedRowOfAnotherJobCostsOnlyItsOwnState) {
  TempDir tmp;
  const ScheduledJob job = Job("rr");
  int64_t t = 1000;
  {
    ProbeRecorder first(Options(tmp.path(), 3, 2), {"rr"});
    for (int i = 0; i < 3; ++i) first.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
    for (int i = 0; i < 2; ++i) first.Record(job, Outcome(job, RunResult::kOk, 1000, t += 1000));
    ASSERT_TRUE(Regressed(first));
  }
  const std::filesystem::path db = tmp.path() / probes::Store::kFileName;
  probes::test_store::Exec(db,
                           "INSERT INTO series_states VALUES ('gh\x1b[2Jost', 'fp', '7:0', 1, "
                           "'{not json')");
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));
  {
    ProbeRecorder second(Options(tmp.path(), 3, 2), {"rr"});
    second.Record(job, Outcome(job, RunResult::kOk, 1000, t += 1000));
    EXPECT_TRUE(Regressed(second));  // still standing: one bad run after the restart shows it
  }
  const std::string first_start = log.str();
  { ProbeRecorder third(Options(tmp.path(), 3, 2), {"rr"}); }
  spdlog::set_default_logger(previous);
  EXPECT_NE(first_start.find("[warning] probe store " + db.string() +
                             ": series_states row (job \"gh\\x1b[2Jost\", fingerprint \"fp\", "
                             "device \"7:0\"): expected the verdict state's JSON"),
            std::string::npos)
      << first_start;
  EXPECT_NE(first_start.find("the row is moved to series_states_quarantine"), std::string::npos);
  EXPECT_EQ(first_start.find('\x1b'), std::string::npos);  // terminal-safe
  EXPECT_EQ(log.str().find("series_states row", first_start.size()), std::string::npos)
      << "warned again at the next start";
  EXPECT_EQ(probes::test_store::QueryInt(db, "SELECT COUNT(*) FROM series_states_quarantine"), 1);
}

// The share of runs judged, why the others were not and the last judged
// run are published, and a restart reads them back from the store.
TEST(ProbeRecorderRestart, TheShareOfRunsJudgedSurvivesARestart) {
  TempDir tmp;
  const ScheduledJob job = Job("rr");
  int64_t t = 1'699'999'000'000;  // within a day of the options' clock
  {
    ProbeRecorder first(Options(tmp.path(), 3, 2), {"rr"});
    for (int i = 0; i < 3; ++i) first.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
    first.Record(job, Contended(job, 500, t += 1000, 3000));  // band 7 learning
    const JudgedSummary& s = first.Snapshot()->jobs[0].judging;
    EXPECT_EQ(s.runs, 4u);
    EXPECT_EQ(s.judged, 1u);  // the third, which completed the baseline
    EXPECT_EQ(s.last_judged_unix_ms, t - 1000);
  }
  ProbeRecorder second(Options(tmp.path(), 3, 2), {"rr"});
  const JudgedSummary& s = second.Snapshot()->jobs[0].judging;
  EXPECT_EQ(s.runs, 4u);
  EXPECT_EQ(s.judged, 1u);
  EXPECT_EQ(s.last_judged_unix_ms, t - 1000);
  uint64_t learning = 0;
  for (const auto& [reason, count] : s.not_judged) learning += reason == "learning" ? count : 0;
  EXPECT_EQ(learning, 3u);
}

}  // namespace
}  // namespace iowatch::daemon
