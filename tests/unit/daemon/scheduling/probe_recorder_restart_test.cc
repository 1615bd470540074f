// ProbeRecorder across restarts and job edits: a standing
// regression and the suspect spans survive a restart, the runs a kill left
// without their verdict are judged again, and an edited job's old series no
// longer keeps its disk from learning.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <initializer_list>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/log.h"
#include "daemon/scheduling/probe_recorder.h"
#include "probes/spec/job_spec.h"
#include "probes/store/store.h"
#include "probes/verdicts/run_metrics.h"
#include "tests/unit/daemon/scheduling/probe_recorder_test_util.h"
#include "tests/unit/probes/store/store_test_util.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {

// For readable failures.
void PrintTo(const probes::JudgedSummary& s, std::ostream* out) {
  *out << s.runs << " runs, " << s.judged << " judged, last judged at " << s.last_judged_unix_ms;
  for (const auto& [reason, count] : s.not_judged) *out << ", " << reason << " " << count;
}

namespace {

namespace fs = std::filesystem;
using iowatch::testing::TempDir;
using test_recorder::CapturedLog;
using test_recorder::Contended;
using test_recorder::FindVerdict;
using test_recorder::Job;
using test_recorder::Options;
using test_recorder::Outcome;

bool Regressed(const ProbeRecorder& recorder) {
  const ProbeVerdict* v = FindVerdict(recorder.Snapshot()->jobs[0], "lat_mean_seconds");
  return v != nullptr && v->regressed;
}

// What a daemon killed after storing the run, before judging it, leaves: the
// run in the store and the series' state (and verdicts) as of the run before.
void StoreUnjudged(const fs::path& dir, const ScheduledJob& job, const RunOutcome& outcome) {
  auto store = probes::Store::OpenInStateDir(dir);
  ASSERT_TRUE(store) << store.error().ToString();
  probes::RunRecord run;
  run.job = job.name;
  run.fingerprint = probes::JobFingerprint(outcome.probe->spec);
  run.device = "8:0";
  run.start_unix_ms = outcome.start_unix_ms;
  run.duration_ms = 1000;
  run.ok = true;
  run.result = *outcome.probe;
  run.metrics = probes::ExtractMetrics(*outcome.probe);
  run.conditions = outcome.conditions;
  ASSERT_TRUE(store->AddRun(run));
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
  // The run the killed daemon stored but never judged: the second bad one.
  StoreUnjudged(tmp.path(), job, Outcome(job, RunResult::kOk, 1000, t += 1000));
  ProbeRecorder second(Options(tmp.path(), 3, 2), {"rr"});
  // Two bad runs raised it; this good one is the first of two that clear it.
  second.Record(job, Outcome(job, RunResult::kOk, 100, t += 1000));
  EXPECT_TRUE(Regressed(second));
}

// The same runs recorded by one daemon, and by one killed after the first
// `live` of them were judged (the rest stored unjudged) and started again
// for the last: the second must end as the first did.
struct KilledAndNot {
  TempDir uninterrupted;
  TempDir killed;
  std::optional<ProbeRecorder> first;     // over `uninterrupted`
  std::optional<ProbeRecorder> second;    // over `killed`, after the kill
  std::vector<std::string> first_found;   // CapturedLog::Findings
  std::vector<std::string> second_found;  // before the kill and after
};

void Replay(KilledAndNot& k, const ScheduledJob& job, const std::vector<RunOutcome>& runs,
            size_t live) {
  {
    CapturedLog log;
    k.first.emplace(Options(k.uninterrupted.path(), 3, 2), std::vector<std::string>{job.name});
    for (const RunOutcome& run : runs) k.first->Record(job, run);
    k.first_found = log.Findings();
  }
  CapturedLog log;
  {
    ProbeRecorder before_kill(Options(k.killed.path(), 3, 2), {job.name});
    for (size_t i = 0; i < live; ++i) before_kill.Record(job, runs[i]);
  }
  for (size_t i = live; i + 1 < runs.size(); ++i) StoreUnjudged(k.killed.path(), job, runs[i]);
  k.second.emplace(Options(k.killed.path(), 3, 2), std::vector<std::string>{job.name});
  k.second->Record(job, runs.back());
  k.second_found = log.Findings();
}

constexpr int64_t kFirstRunMs = 1'699'999'000'000;  // within a day of the options' clock

std::vector<RunOutcome> Runs(const ScheduledJob& job, std::initializer_list<double> clat_us) {
  int64_t t = kFirstRunMs;
  std::vector<RunOutcome> out;
  for (double us : clat_us) out.push_back(Outcome(job, RunResult::kOk, us, t += 1000));
  return out;
}

// The runs judged again after a kill count as if they had been judged live:
// their verdicts in the store's run_verdicts, once each, and in the share of
// runs judged, now and after the next start; what they found is logged; and
// the last judged one's verdicts are published while the next run is not
// judged.
TEST(ProbeRecorderRestart, TheRunsJudgedAgainCountAsIfJudgedLive) {
  const ScheduledJob job = Job("rr");
  KilledAndNot k;
  // Learning, learning, learned; two bad (raised); then one beside others'
  // load, whose band has no baseline: not judged.
  std::vector<RunOutcome> runs = Runs(job, {100, 100, 100, 1000, 1000});
  runs.push_back(Contended(job, 1000, kFirstRunMs + 6000, 3000));
  Replay(k, job, runs, 3);
  const probes::JudgedSummary& want = k.first->Snapshot()->jobs[0].judging;
  ASSERT_EQ(want.runs, 6u);
  ASSERT_EQ(want.judged, 3u);
  EXPECT_EQ(k.second->Snapshot()->jobs[0].judging, want);
  ASSERT_TRUE(Regressed(*k.first));
  EXPECT_TRUE(Regressed(*k.second));
  const std::vector<ProbeVerdict>& published = k.second->Snapshot()->jobs[0].verdicts;
  const std::vector<ProbeVerdict>& live = k.first->Snapshot()->jobs[0].verdicts;
  ASSERT_EQ(published.size(), live.size());
  for (size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(published[i].verdict, live[i].verdict) << live[i].verdict.metric;
    EXPECT_EQ(published[i].regressed, live[i].regressed) << live[i].verdict.metric;
  }
  ASSERT_FALSE(k.first_found.empty());
  EXPECT_EQ(k.second_found, k.first_found);
  const fs::path db = k.killed.path() / probes::Store::kFileName;
  EXPECT_EQ(probes::test_store::QueryInt(db, "SELECT COUNT(*) FROM run_verdicts"), 6);
  EXPECT_EQ(probes::test_store::QueryInt(db, "SELECT COUNT(*) FROM run_verdicts WHERE judged = 1"),
            3);
  k.second.reset();
  ProbeRecorder third(Options(k.killed.path(), 3, 2), {"rr"});
  EXPECT_EQ(third.Snapshot()->jobs[0].judging, want);
}

// A band that learns its baseline while runs are judged again learns it
// from the runs up to the one judged, as live judging did: not from the runs
// stored after it, nor from the run whose recording started the catch-up.
TEST(ProbeRecorderRestart, ABaselineLearnedWhileCatchingUpIsTheOneLearnedLive) {
  const ScheduledJob job = Job("rr");
  KilledAndNot k;
  Replay(k, job, Runs(job, {100, 110, 120, 130, 140, 150}), 1);
  const std::string fingerprint = probes::JobFingerprint(job.spec);
  auto live = probes::Store::OpenInStateDir(k.uninterrupted.path());
  auto caught_up = probes::Store::OpenInStateDir(k.killed.path());
  ASSERT_TRUE(live && caught_up);
  const auto want = live->GetBaseline("rr", fingerprint, "8:0");
  const auto got = caught_up->GetBaseline("rr", fingerprint, "8:0");
  ASSERT_TRUE(want && *want && got && *got);
  EXPECT_EQ((*want)->baseline.run_ids, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ((*got)->baseline.run_ids, (*want)->baseline.run_ids);
  EXPECT_EQ((*got)->baseline, (*want)->baseline);
  EXPECT_EQ(k.second->Snapshot()->jobs[0].judging, k.first->Snapshot()->jobs[0].judging);
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
    const probes::JudgedSummary& s = first.Snapshot()->jobs[0].judging;
    EXPECT_EQ(s.runs, 4u);
    EXPECT_EQ(s.judged, 1u);  // the third, which completed the baseline
    EXPECT_EQ(s.last_judged_unix_ms, t - 1000);
  }
  ProbeRecorder second(Options(tmp.path(), 3, 2), {"rr"});
  const probes::JudgedSummary& s = second.Snapshot()->jobs[0].judging;
  EXPECT_EQ(s.runs, 4u);
  EXPECT_EQ(s.judged, 1u);
  EXPECT_EQ(s.last_judged_unix_ms, t - 1000);
  uint64_t learning = 0;
  for (const auto& [reason, count] : s.not_judged) learning += reason == "learning" ? count : 0;
  EXPECT_EQ(learning, 3u);
}

}  // namespace
}  // namespace iowatch::daemon
