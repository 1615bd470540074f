// JudgeRun over an in-memory series: what is judged, learned and left alone
// for clean, contended (load-band), CPU-waiting and unknown runs; learning
// waits for policy.runs over policy.min_age; no band learns while a
// regression stands; a baseline replaced from outside restarts the
// hysteresis.
#include "probes/verdicts/job_judge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "probes/verdicts/memory_baseline_source.h"
#include "tests/unit/probes/verdicts/synthetic_disk.h"

namespace iowatch::probes {
namespace {

constexpr int64_t kMinute = 60'000;

// The test's series: runs every `every_ms`, each a 2 s read of 20,000 I/Os
// whose latency is `lat_us` µs (all equal: every quantile is lat_us), with
// `foreign` others' 4 KiB requests beside it (nullopt: conditions unknown).
class Series {
 public:
  explicit Series(BaselinePolicy policy) : policy_(std::move(policy)) {
    state_.tracker = RegressionTracker::For(policy_);
  }

  RunJudgement Run(double lat_us, std::optional<uint64_t> foreign = 0,
                   std::optional<double> cpu_wait = std::nullopt, double steal = 0) {
    RunRecord run;
    run.id = ++next_id_;
    run.job = "j";
    run.start_unix_ms = clock_ms_;
    clock_ms_ += every_ms;
    DirectionStats& d = run.result.read;
    test_data::FillEqualLatencies(d, 20000, static_cast<uint64_t>(lat_us * 1000), 2);
    run.metrics = ExtractMetrics(run.result);
    if (foreign) {
      RunConditions c;
      c.seconds = 2;
      c.own_requests = d.ios;
      c.own_bytes = d.bytes;
      c.device_ios = d.ios + *foreign;
      c.device_bytes = d.bytes + *foreign * 4096;
      c.cpu_wait = cpu_wait;
      c.cpu_steal = steal;
      run.conditions = c;
    }
    source.Add(run);
    Result<RunJudgement> judged = JudgeRun(run, source, state_, device, policy_, clock_ms_);
    EXPECT_TRUE(judged) << (judged ? "" : judged.error().message);
    return judged ? *judged : RunJudgement{};
  }

  MemoryBaselineSource source;
  DeviceSuspicion device;  // the other series on the disk
  int64_t every_ms = kMinute;
  int64_t Now() const { return clock_ms_; }
  const SeriesState& state() const { return state_; }

 private:
  BaselinePolicy policy_;
  SeriesState state_;
  int64_t next_id_ = 0;
  int64_t clock_ms_ = 1'700'000'000'000;
};

BaselinePolicy Policy() {
  BaselinePolicy p;
  p.runs = 10;
  p.min_age_ms = 15 * kMinute;
  return p;
}

TEST(JudgeRunTest, CleanRunsLearnOnceThereAreEnoughOverTheMinimumAge) {
  Series s(Policy());
  // Ten runs a minute apart span 9 minutes: not yet.
  for (int i = 0; i < 10; ++i) {
    const RunJudgement j = s.Run(100);
    EXPECT_EQ(j.classification.run_class, RunClass::kClean);
    EXPECT_FALSE(j.judged);
    EXPECT_FALSE(j.learned);
    EXPECT_EQ(j.reason, NotJudged::kLearning);
    EXPECT_NE(j.why.find(fmt::format("quiet runs has no baseline yet ({} of 10 runs", i + 1)),
              std::string::npos)
        << j.why;
  }
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(s.Run(100).learned);
  // The 16th run is 15 minutes after the first.
  const RunJudgement learned = s.Run(100);
  ASSERT_TRUE(learned.learned) << learned.why;
  EXPECT_TRUE(learned.judged);  // compared with the baseline it completed
  EXPECT_EQ(learned.baseline->baseline.band, kCleanBand);
  EXPECT_EQ(learned.baseline->baseline.run_ids.size(), 10u);
  EXPECT_EQ(learned.baseline->baseline.run_ids.front(), 1);  // the first
  EXPECT_EQ(learned.baseline->baseline.run_ids.back(), 16);  // and the last
  const RunJudgement judged = s.Run(100);
  EXPECT_TRUE(judged.judged);
  EXPECT_EQ(judged.why, "");
  EXPECT_EQ(judged.reason, NotJudged::kJudged);
  EXPECT_FALSE(judged.verdicts.empty());
}

TEST(JudgeRunTest, UnknownRunsAreNeverJudgedNorLearnedFrom) {
  Series s(Policy());
  for (int i = 0; i < 30; ++i) {
    const RunJudgement j = s.Run(100, std::nullopt);
    EXPECT_EQ(j.classification.run_class, RunClass::kUnknown);
    EXPECT_FALSE(j.judged);
    EXPECT_FALSE(j.learned);
    EXPECT_NE(j.why.find("conditions are unknown"), std::string::npos);
    EXPECT_EQ(j.reason, NotJudged::kUnknownConditions);
  }
  EXPECT_TRUE(s.source.Baselines()->empty());
}

TEST(JudgeRunTest, ContendedRunsAreJudgedOnlyWithinTheirLoadBand) {
  Series s(Policy());
  for (int i = 0; i < 16; ++i) s.Run(100);  // the clean baseline
  ASSERT_EQ(s.source.Baselines()->size(), 1u);
  // 3,000 foreign IOPS (6,000 in 2 s, 3,000 × 1.06 weighted = 3,188): band 7,
  // [2048, 4096). Under
  // that load the probe takes 250 µs: never judged against the clean 100.
  // Once 30 runs span both loads (16 clean, 14 of these), the load model
  // judges the next against its prediction at 3,188/s (load_model.h): good.
  for (int i = 0; i < 15; ++i) {
    const RunJudgement j = s.Run(250, 6000);
    EXPECT_EQ(j.classification.run_class, RunClass::kContended);
    EXPECT_EQ(j.classification.band, 7);
    EXPECT_EQ(j.judged, i >= 14) << i;
    if (j.judged) {
      EXPECT_TRUE(j.other_conditions);
    } else {
      EXPECT_NE(j.why.find("contended (others did 3000 IOPS"), std::string::npos) << j.why;
    }
    for (const MetricVerdict& v : j.verdicts) EXPECT_FALSE(v.bad) << v.metric;
    EXPECT_TRUE(j.changes.empty());
  }
  // The 16th completes band 7's baseline and is the first judged against it.
  const RunJudgement first = s.Run(250, 6000);
  EXPECT_TRUE(first.learned);
  EXPECT_TRUE(first.judged);
  ASSERT_EQ(s.source.Baselines()->size(), 2u);
  const RunJudgement same = s.Run(250, 6000);
  EXPECT_TRUE(same.judged);
  EXPECT_EQ(same.baseline->baseline.band, 7);
  for (const MetricVerdict& v : same.verdicts) EXPECT_FALSE(v.bad) << v.metric;
  // The disk gets three times slower under the same load: bad, and raised
  // after K runs.
  size_t raised = 0;
  for (int i = 0; i < 3; ++i) {
    for (const RegressionChange& c : s.Run(750, 6000).changes) raised += c.regressed;
  }
  EXPECT_GT(raised, 0u);
}

TEST(JudgeRunTest, AContendedRunsQuantilesAreNotJudgedItsThroughputAndMeanAre) {
  Series s(Policy());
  for (int i = 0; i < 16; ++i) s.Run(250, 6000);  // band 7's baseline
  const RunJudgement slow = s.Run(750, 6000);
  ASSERT_TRUE(slow.judged);
  std::map<std::string, const MetricVerdict*> by_metric;
  for (const MetricVerdict& v : slow.verdicts) by_metric[v.metric] = &v;
  ASSERT_TRUE(by_metric.contains("iops"));
  EXPECT_TRUE(by_metric["iops"]->judged);  // the same 20,000 I/Os in 2 s: not worse
  ASSERT_TRUE(by_metric.contains("lat_mean_seconds"));
  EXPECT_TRUE(by_metric["lat_mean_seconds"]->judged);
  EXPECT_TRUE(by_metric["lat_mean_seconds"]->bad);
  for (const char* quantile : {"lat_p50_seconds", "lat_p90_seconds", "lat_p99_seconds"}) {
    ASSERT_TRUE(by_metric.contains(quantile)) << quantile;
    EXPECT_FALSE(by_metric[quantile]->judged) << quantile;
    EXPECT_FALSE(by_metric[quantile]->bad) << quantile;
    EXPECT_EQ(by_metric[quantile]->note,
              "a quantile beside others' load: contended runs judge IOPS, bandwidth and the "
              "mean only");
  }
  // max_quantile 0.5 judges p50, not p90.
  BaselinePolicy median = Policy();
  median.contention.max_quantile = 0.5;
  Series up_to_p50(median);
  for (int i = 0; i < 16; ++i) up_to_p50.Run(250, 6000);
  for (const MetricVerdict& v : up_to_p50.Run(750, 6000).verdicts) {
    if (v.metric == "lat_p50_seconds") {
      EXPECT_TRUE(v.judged && v.bad);
    }
    if (v.metric == "lat_p90_seconds") {
      EXPECT_FALSE(v.judged);
      EXPECT_EQ(v.note, "a quantile beside others' load: contended runs judge quantiles up to p50");
    }
  }
  // max_quantile 1 judges every quantile the run can carry.
  BaselinePolicy all = Policy();
  all.contention.max_quantile = 1;
  Series every(all);
  for (int i = 0; i < 16; ++i) every.Run(250, 6000);
  for (const MetricVerdict& v : every.Run(750, 6000).verdicts) {
    if (v.metric == "lat_p99_seconds") {
      EXPECT_TRUE(v.judged && v.bad);
    }
  }
  // Clean runs judge their tails.
  Series clean(Policy());
  for (int i = 0; i < 16; ++i) clean.Run(100);
  for (const MetricVerdict& v : clean.Run(300).verdicts) {
    if (v.metric == "lat_p99_seconds") {
      EXPECT_TRUE(v.judged && v.bad);
    }
  }
}

// A clean baseline that allows 50 % and a band-7 baseline learned beside a
// wild neighbour that allows ~300 %: a 3× slowdown is bad in the first and
// good in the second. Runs alternating between them must still raise it.
// The mean is judged in both (a contended run's quantiles are not).
TEST(JudgeRunTest, ASlowdownIsRaisedWhateverTheBandOrder) {
  BaselinePolicy policy = Policy();
  policy.metrics = {"iops", "lat_mean_seconds"};
  Series s(policy);
  for (int i = 0; i < 16; ++i) s.Run(100);
  for (int i = 0; i < 16; ++i) s.Run(i % 2 == 0 ? 100 : 500, 6000);
  ASSERT_EQ(s.source.Baselines()->size(), 2u);
  size_t raised = 0;
  for (int i = 0; i < 3; ++i) {
    const RunJudgement quiet = s.Run(300);
    ASSERT_TRUE(quiet.judged);
    for (const RegressionChange& c : quiet.changes) raised += c.regressed;
    const RunJudgement busy = s.Run(400, 6000);
    ASSERT_TRUE(busy.judged);
    for (const MetricVerdict& v : busy.verdicts) EXPECT_FALSE(v.bad) << v.metric;
    // The wide band's good run did not end the suspect span: nothing learns.
    EXPECT_NE(s.state().suspect_since_ms, 0) << i;
  }
  EXPECT_GT(raised, 0u);
  EXPECT_TRUE(s.state().tracker.AnyRegressed());
  // The wide band's good runs do not clear it either; quiet good runs do, K
  // of them.
  for (int i = 0; i < 5; ++i) s.Run(400, 6000);
  EXPECT_TRUE(s.state().tracker.AnyRegressed());
  s.Run(100);
  s.Run(100);
  EXPECT_TRUE(s.state().tracker.AnyRegressed());
  s.Run(100);
  EXPECT_FALSE(s.state().tracker.AnyRegressed());
  EXPECT_EQ(s.state().suspect_since_ms, 0);
}

TEST(JudgeRunTest, NoBandLearnsWhileARegressionStands) {
  Series s(Policy());
  for (int i = 0; i < 16; ++i) s.Run(100);
  for (int i = 0; i < 3; ++i) s.Run(400);  // raised
  ASSERT_TRUE(s.state().tracker.AnyRegressed());
  for (int i = 0; i < 20; ++i) {
    const RunJudgement j = s.Run(1000, 6000);
    EXPECT_FALSE(j.learned);
    EXPECT_NE(j.why.find("none is learned while a regression stands"), std::string::npos) << j.why;
    EXPECT_EQ(j.reason, NotJudged::kRegressionStanding);
  }
  EXPECT_EQ(s.source.Baselines()->size(), 1u);
}

TEST(JudgeRunTest, NoBandLearnsFromRunsSinceAnUnresolvedBadVerdict) {
  Series s(Policy());
  for (int i = 0; i < 16; ++i) s.Run(100);
  EXPECT_TRUE(s.Run(400).judged);  // one bad run: no regression yet (K = 3)
  ASSERT_FALSE(s.state().tracker.AnyRegressed());
  EXPECT_NE(s.state().suspect_since_ms, 0);
  // Twenty contended runs over 20 minutes: band 7 would learn, but every
  // one of them may be of a slower disk.
  for (int i = 0; i < 20; ++i) {
    const RunJudgement j = s.Run(1000, 6000);
    EXPECT_FALSE(j.learned);
    EXPECT_NE(j.why.find("has no baseline yet (0 of 10 runs"), std::string::npos) << j.why;
  }
  // A good clean run resolves it: the band learns again, from runs after the
  // suspect span only (its twenty runs are never learned from).
  EXPECT_TRUE(s.Run(100).judged);
  EXPECT_EQ(s.state().suspect_since_ms, 0);
  ASSERT_EQ(s.state().suspect_spans.size(), 1u);
  const RunJudgement first = s.Run(1000, 6000);
  EXPECT_FALSE(first.learned);
  EXPECT_NE(first.why.find("has no baseline yet (1 of 10 runs"), std::string::npos) << first.why;
  bool learned = false;
  for (int i = 0; i < 15 && !learned; ++i) learned = s.Run(1000, 6000).learned;
  EXPECT_TRUE(learned);
}

TEST(JudgeRunTest, NoBandLearnsWhileAnotherJobOnTheDiskIsSuspectOrRegressed) {
  Series s(Policy());
  for (int i = 0; i < 16; ++i) s.Run(100);  // the clean baseline
  // Another job on the disk had a bad verdict at the next run's start.
  s.device.suspect_since_ms = s.Now();
  for (int i = 0; i < 20; ++i) {
    const RunJudgement j = s.Run(1000, 6000);
    EXPECT_FALSE(j.learned);
    EXPECT_NE(j.why.find("has no baseline yet (0 of 10 runs"), std::string::npos) << j.why;
  }
  // Its regression then stands: still nothing learned, and the log says whose.
  s.device.regressed = true;
  const RunJudgement standing = s.Run(1000, 6000);
  EXPECT_FALSE(standing.learned);
  EXPECT_NE(standing.why.find("none is learned while a regression stands (another job's"),
            std::string::npos)
      << standing.why;
  // Resolved there: band 7 learns from the runs of this job since.
  s.device = {};
  bool learned = false;
  for (int i = 0; i < 16 && !learned; ++i) learned = s.Run(250, 6000).learned;
  EXPECT_TRUE(learned);
}

TEST(DeviceSuspicionTest, TheEarliestSuspicionAndAnyRegression) {
  SeriesState a{RegressionTracker(3), {}, 5'000, {}, {}};
  SeriesState b{RegressionTracker(3), {}, 0, {}, {}};
  SeriesState c{RegressionTracker(3), {}, 3'000, {}, {}};
  DeviceSuspicion d;
  d.Add(a);
  d.Add(b);
  EXPECT_EQ(d.suspect_since_ms, 5'000);
  d.Add(c);
  EXPECT_EQ(d.suspect_since_ms, 3'000);
  EXPECT_FALSE(d.regressed);
}

TEST(JudgeRunTest, AfterACaptureBandsLearnOnlyFromLaterRuns) {
  Series s(Policy());
  for (int i = 0; i < 16; ++i) s.Run(100);
  for (int i = 0; i < 12; ++i) s.Run(250, 6000);  // band 7 candidates of the old norm
  // The operator pins a new clean baseline now (a slower disk accepted).
  Baseline captured = s.source.Baselines()->front().baseline;
  captured.created_unix_ms = s.Now();
  s.source.Replace(captured);
  ASSERT_EQ(s.source.Baselines()->size(), 1u);  // band 7 has none yet
  // Band 4 learns from runs after the capture only: 10 over 15 minutes.
  for (int i = 0; i < 15; ++i) {
    const RunJudgement j = s.Run(600, 6000);
    EXPECT_FALSE(j.learned) << i;
    EXPECT_NE(j.why.find(fmt::format("({} of 10 runs", std::min(i + 1, 15))), std::string::npos)
        << j.why;
  }
  EXPECT_TRUE(s.Run(600, 6000).learned);
}

TEST(JudgeRunTest, RunsThatWaitedForTheCpuAreNotJudged) {
  Series s(Policy());
  for (int i = 0; i < 16; ++i) s.Run(100);
  const RunJudgement j = s.Run(900, 0, 0.6);
  EXPECT_EQ(j.classification.run_class, RunClass::kContended);
  EXPECT_EQ(j.classification.band, kNoBand);
  EXPECT_FALSE(j.judged);
  EXPECT_TRUE(j.verdicts.empty());
  EXPECT_EQ(ToString(j.reason), "cpu_contended");
  EXPECT_NE(j.why.find("CPU was contended (its thread waited, or the hypervisor took it)"),
            std::string::npos)
      << j.why;
}

// A run under the hypervisor's steal, or in a band with no
// baseline yet, is judged against the nearest earlier runs that were at
// least as stressed: healthy, it is no worse than they were; slower, it is.
TEST(JudgeRunTest, RunsWithoutABaselineAreJudgedAgainstRunsAtLeastAsStressed) {
  Series s(Policy());
  // Twelve runs under 20 % steal over 11 minutes (min_age is 15: no band
  // would have learned from them anyway, and they have no band).
  for (int i = 0; i < 16; ++i) {
    const RunJudgement j = s.Run(150, 0, std::nullopt, 0.20);
    EXPECT_EQ(j.classification.band, kNoBand);
    EXPECT_FALSE(j.judged) << i;  // not yet 10 heavier runs over 15 minutes
  }
  // Under 10 % steal: judged against the 20 % runs, good.
  const RunJudgement lighter = s.Run(120, 0, std::nullopt, 0.10);
  EXPECT_TRUE(lighter.judged) << lighter.why;
  EXPECT_TRUE(lighter.other_conditions);
  EXPECT_EQ(lighter.reason, NotJudged::kJudged);
  EXPECT_EQ(lighter.baseline->id, 0);  // made for the run, not stored
  for (const MetricVerdict& v : lighter.verdicts) EXPECT_FALSE(v.bad) << v.metric;
  EXPECT_TRUE(s.source.Baselines()->empty());
  // Three times slower at the same steal: bad, raised after K runs.
  size_t raised = 0;
  for (int i = 0; i < 3; ++i) {
    const RunJudgement slow = s.Run(450, 0, std::nullopt, 0.10);
    EXPECT_TRUE(slow.judged);
    for (const RegressionChange& c : slow.changes) raised += c.regressed;
  }
  EXPECT_GT(raised, 0u);
  // Quantiles are not judged against other conditions' runs.
  for (const MetricVerdict& v : s.Run(450, 0, std::nullopt, 0.10).verdicts) {
    if (v.metric == "lat_p99_seconds") {
      EXPECT_FALSE(v.judged);
    }
  }
  // More stressed than any earlier run: nothing to judge it against.
  const RunJudgement heaviest = s.Run(150, 0, std::nullopt, 0.35);
  EXPECT_FALSE(heaviest.judged);
  EXPECT_EQ(heaviest.reason, NotJudged::kCpuContended);
  EXPECT_NE(heaviest.why.find("fewer than 10 earlier runs at least as stressed over 15 min"),
            std::string::npos)
      << heaviest.why;
}

// A run judged again once later runs are stored (the daemon's catch-up after
// a kill) is judged as it was live: its band learns from the runs up to it,
// and runs of other conditions are judged against earlier runs only.
TEST(JudgeRunTest, ARunJudgedAgainAfterLaterRunsWereStoredIsJudgedAsItWasLive) {
  Series s(Policy());
  std::vector<RunJudgement> live;
  // Under steal (no band): judged against runs at least as stressed once
  // there are ten over 15 minutes; then clean runs, whose band learns once
  // ten span 15 minutes.
  for (int i = 0; i < 16; ++i) live.push_back(s.Run(150 + i, 0, std::nullopt, 0.20));
  for (int i = 0; i < 2; ++i) live.push_back(s.Run(120, 0, std::nullopt, 0.10));
  for (int i = 0; i < 18; ++i) live.push_back(s.Run(100 + i));
  MemoryBaselineSource later;  // every run stored, none judged
  for (int64_t id = 1; id <= static_cast<int64_t>(live.size()); ++id) {
    later.Add(*s.source.Load(id));
  }
  SeriesState state;
  state.tracker = RegressionTracker::For(Policy());
  for (size_t i = 0; i < live.size(); ++i) {
    const RunRecord run = *later.Load(static_cast<int64_t>(i + 1));
    const Result<RunJudgement> again =
        JudgeRun(run, later, state, {}, Policy(), run.start_unix_ms + s.every_ms);
    ASSERT_TRUE(again) << again.error().message;
    const RunJudgement& want = live[i];
    EXPECT_EQ(again->judged, want.judged) << "run " << run.id << ": " << again->why;
    EXPECT_EQ(again->why, want.why) << "run " << run.id;
    EXPECT_EQ(again->learned, want.learned) << "run " << run.id;
    EXPECT_EQ(again->other_conditions, want.other_conditions) << "run " << run.id;
    EXPECT_TRUE(again->verdicts == want.verdicts)
        << "run " << run.id << ": its verdicts differ from those judged live";
    ASSERT_EQ(again->baseline.has_value(), want.baseline.has_value()) << "run " << run.id;
    if (!want.baseline) continue;
    EXPECT_EQ(again->baseline->baseline.run_ids, want.baseline->baseline.run_ids)
        << "run " << run.id;
    for (int64_t id : again->baseline->baseline.run_ids) EXPECT_LE(id, run.id);
  }
  // Both paths were taken.
  EXPECT_TRUE(live[16].other_conditions && live[16].judged) << live[16].why;
  EXPECT_TRUE(live.back().judged && !live.back().other_conditions) << live.back().why;
}

TEST(JudgeRunTest, WithoutBandsContendedRunsAreNeverJudged) {
  BaselinePolicy p = Policy();
  p.contention.bands = false;
  Series s(p);
  for (int i = 0; i < 40; ++i) {
    const RunJudgement j = s.Run(250, 6000);
    EXPECT_FALSE(j.judged);
    EXPECT_FALSE(j.learned);
    EXPECT_EQ(j.reason, NotJudged::kBandsOff);
  }
  EXPECT_TRUE(s.source.Baselines()->empty());
}

TEST(JudgeRunTest, ABaselineReplacedFromOutsideRestartsTheHysteresis) {
  Series s(Policy());
  for (int i = 0; i < 16; ++i) s.Run(100);
  s.Run(400);
  s.Run(400);  // two bad runs of the three that raise
  Baseline replaced = s.source.Baselines()->front().baseline;
  for (MetricBaseline& m : replaced.metrics) m.median *= 4;  // "captured" when slow
  s.source.Replace(replaced);
  const RunJudgement j = s.Run(400);
  EXPECT_TRUE(j.judged);
  EXPECT_TRUE(j.changes.empty());
  EXPECT_FALSE(s.state().tracker.AnyRegressed());
}

// A review's series: 40 runs over 2 h whose thread waited 30 % of the
// time (contended: in no band, judged only against runs of other
// conditions), steal 0 but for two runs at 0.002 % that happened to be 1.3
// times slower. The load model learned a steal slope from those two and,
// within its fixed slack of a point of steal, predicted a run at 0.1 % at
// about 50 s (and one at 1 % past 10^50 s): a run three times slower was
// judged good. Two runs are no spread, so the model has no slope and says
// nothing past them; the run is judged against runs at least as stressed
// (within the measurement's point of steal): bad.
Series TwoTicksOfStealSeries() {
  Series s(Policy());
  s.every_ms = 3 * kMinute;
  for (int i = 0; i < 40; ++i) {
    const bool tick = i == 2 || i == 4;  // before any run is judged
    const RunJudgement j = s.Run(tick ? 130 : 100, 0, 0.3, tick ? 2e-5 : 0);
    EXPECT_EQ(j.classification.band, kNoBand);
    for (const MetricVerdict& v : j.verdicts) EXPECT_FALSE(v.bad) << i << " " << v.metric;
  }
  return s;
}

TEST(JudgeRunTest, ARunPastTheStressesTheModelsRunsCoveredIsJudgedAgainstHeavierRuns) {
  for (const double steal : {0.001, 0.01}) {
    Series s = TwoTicksOfStealSeries();
    const RunJudgement slow = s.Run(300, 0, 0.3, steal);
    ASSERT_TRUE(slow.judged) << slow.why;
    EXPECT_NE(slow.against.find("nearest runs at least as stressed (outside the load model"),
              std::string::npos)
        << "steal " << steal << ": " << slow.against;
    bool mean_bad = false;
    for (const MetricVerdict& v : slow.verdicts) {
      EXPECT_TRUE(std::isfinite(v.baseline) && std::isfinite(v.threshold)) << v.metric;
      if (v.metric == "lat_mean_seconds") mean_bad = v.bad;
    }
    EXPECT_TRUE(mean_bad) << "steal " << steal << ": three times slower judged good";
  }
}

// Past what the model's runs covered and with no earlier run as stressed:
// not judged, and the reason says so (exported as
// iowatch_probe_not_judged_runs{reason="outside_model"}).
TEST(JudgeRunTest, ARunOutsideTheModelWithNoHeavierRunsIsNotJudgedOutsideModel) {
  Series s = TwoTicksOfStealSeries();
  const RunJudgement j = s.Run(100, 0, 0.6, 0);  // waited 60 %, the runs 30 %
  EXPECT_FALSE(j.judged);
  EXPECT_TRUE(j.verdicts.empty());
  EXPECT_EQ(j.reason, NotJudged::kOutsideModel);
  EXPECT_EQ(ToString(j.reason), "outside_model");
  EXPECT_NE(j.why.find("outside the load model's runs (wait 60 % above the 30–30 % its 40 runs "
                       "covered (no slope"),
            std::string::npos)
      << j.why;
  EXPECT_NE(j.why.find("fewer than 10 earlier runs at least as stressed"), std::string::npos)
      << j.why;
  EXPECT_NE(std::ranges::find(kNotJudgedReasons, NotJudged::kOutsideModel),
            kNotJudgedReasons.end());
}

TEST(JudgeRunTest, ASlowDriftIsRaisedByTheEvidenceOfManyRunsBeforeAnyRunIsBad) {
  // A mean latency that grows 4 % a day, every 15 minutes, on a quiet disk,
  // from the fifth day (after the drift watch's reference day and its three
  // days of calibration): no run is bad for the per-run judge (50 %
  // tolerance) before day 17; the drift watch raises it once the evidence
  // adds up and the level passes 10 % (0.2 of the tolerance), marks the
  // series regressed and suspect.
  BaselinePolicy policy = Policy();
  Series s(policy);
  s.every_ms = 15 * kMinute;
  constexpr int kPerDay = 96;
  std::optional<RegressionChange> drift;
  int drift_run = -1;
  constexpr int kHealthyDays = 4;
  for (int i = 0; i < 14 * kPerDay && !drift; ++i) {
    const double noise = 1 + 0.03 * ((i % 3) - 1);
    const double grown =
        i < kHealthyDays * kPerDay ? 1 : 1 + 0.04 * (i - kHealthyDays * kPerDay) / kPerDay;
    const RunJudgement j = s.Run(100 * noise * grown);
    for (const RegressionChange& c : j.changes) {
      ASSERT_TRUE(c.drift) << "run " << i << ": the per-run judge raised " << c.metric
                           << " first, at " << c.verdict.ratio;
      drift = c;
      drift_run = i;
    }
  }
  ASSERT_TRUE(drift) << "a 4 %/day drift was not raised in 14 days";
  EXPECT_EQ(drift->metric, "lat_mean_seconds");
  EXPECT_TRUE(drift->regressed);
  EXPECT_GE(drift->verdict.ratio, 1.08);
  const double grown_by = 0.04 * (drift_run - kHealthyDays * kPerDay) / kPerDay;
  EXPECT_GE(grown_by, 0.08);
  EXPECT_LT(grown_by, 0.20);  // long before the per-run judge's 50 %
  EXPECT_GT(drift->since_ms, s.every_ms * kHealthyDays * kPerDay);
  EXPECT_TRUE(s.state().Regressed("read", "lat_mean_seconds"));
  EXPECT_FALSE(s.state().tracker.Regressed("read", "lat_mean_seconds"));
  EXPECT_NE(s.state().suspect_since_ms, 0);  // no band learns from the drifted runs
  ASSERT_TRUE(s.state().drift.Ratio("read", "lat_mean_seconds"));
  EXPECT_NEAR(*s.state().drift.Ratio("read", "lat_mean_seconds"), drift->verdict.ratio, 1e-9);
}

// The run's verdict on its mean latency (a failure when it has none).
MetricVerdict MeanVerdict(const RunJudgement& j) {
  const auto v =
      std::ranges::find(j.verdicts, std::string("lat_mean_seconds"), &MetricVerdict::metric);
  EXPECT_NE(v, j.verdicts.end());
  return v == j.verdicts.end() ? MetricVerdict{} : *v;
}

TEST(JudgeRunTest, ABandsBaselineBorrowsTheNoiseItsFewRunsDidNotSee) {
  // The quiet band learns from its first 10 runs, which happen to be calm
  // (spread at the 10 % floor); the disk's runs then scatter by a third. Once
  // a day of runs says so, a band's allowed distance is at least the disk's
  // noise: an ordinary run 1.6x the median is no longer bad, a 3x one is.
  Series s(Policy());
  s.every_ms = 15 * kMinute;
  for (int i = 0; i < 16; ++i) s.Run(100);
  constexpr double kScatter[] = {0.75, 1.0, 1.33};
  for (int i = 0; i < 110; ++i) s.Run(100 * kScatter[i % 3]);
  ASSERT_FALSE(s.state().drift.Reference().empty()) << "a day of runs chose no reference";
  const MetricVerdict ordinary = MeanVerdict(s.Run(160));
  EXPECT_FALSE(ordinary.bad) << "threshold " << ordinary.threshold << " of " << ordinary.baseline;
  EXPECT_GT(ordinary.threshold, 0.6 * ordinary.baseline);  // the band's own: 0.5
  const MetricVerdict slow = MeanVerdict(s.Run(300));
  EXPECT_TRUE(slow.bad) << "threshold " << slow.threshold << " of " << slow.baseline;
}

TEST(JudgeRunTest, ABandsBaselineBorrowsTheNoiseTheCalibrationSaw) {
  // A calm first day (runs within 6 %) makes a reference quieter than the
  // disk: its next three days scatter by 40 %. Once they are calibrated, the
  // band's allowed distance is the noise they showed: an ordinary run 1.6x
  // the median is not bad (the first day alone would allow 50 %), a 3x one is.
  Series s(Policy());
  s.every_ms = 15 * kMinute;
  constexpr int kPerDay = 96;
  constexpr double kCalm[] = {0.94, 1.0, 1.06};
  for (int i = 0; i < kPerDay + 4; ++i) s.Run(100 * kCalm[i % 3]);
  ASSERT_FALSE(s.state().drift.Reference().empty()) << "a day of runs chose no reference";
  constexpr double kScatter[] = {0.7, 1.0, 1.43};
  for (int i = 0; i < 3 * kPerDay + 6; ++i) s.Run(100 * kScatter[i % 3]);
  const std::optional<double> scatter =
      s.state().drift.Scatter("read", "lat_mean_seconds", s.Now(), true);
  ASSERT_TRUE(scatter) << "three days did not calibrate";
  EXPECT_GT(*scatter, 2);
  EXPECT_FALSE(s.state().drift.Scatter("read", "lat_mean_seconds", s.Now(), false))
      << "no contended run was calibrated";
  const MetricVerdict ordinary = MeanVerdict(s.Run(160));
  EXPECT_FALSE(ordinary.bad) << "threshold " << ordinary.threshold << " of " << ordinary.baseline;
  const MetricVerdict slow = MeanVerdict(s.Run(300));
  EXPECT_TRUE(slow.bad) << "threshold " << slow.threshold << " of " << slow.baseline;
}

}  // namespace
}  // namespace iowatch::probes
