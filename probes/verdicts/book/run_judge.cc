#include "probes/verdicts/book/run_judge.h"

#include <algorithm>
#include <utility>

#include "probes/store/store_baseline_source.h"
#include "probes/verdicts/book/judgement_log.h"

namespace iowatch::probes {
namespace {

// What explains a regression `c` raised by judging `r`: its ratios, start,
// the runs it was judged against and their load beside the run's.
RegressionFacts FactsOf(const RegressionChange& c, const JudgedRun& r, const SeriesState& series,
                        std::span<const LearningCandidate> candidates) {
  RegressionFacts f;
  f.op = c.op;
  f.metric = c.metric;
  // A drift's verdict is the smoothed one; the run's own, if it was judged.
  const auto own = std::ranges::find_if(r.judgement.verdicts, [&](const MetricVerdict& v) {
    return v.op == c.op && v.metric == c.metric;
  });
  f.ratio = !c.drift ? c.verdict.ratio : own != r.judgement.verdicts.end() ? own->ratio : 0;
  f.drift_ratio = series.drift.Ratio(c.op, c.metric);
  f.since_ms = c.since_ms;
  if (r.judgement.baseline) {
    f.baseline = SummarizeRuns(r.judgement.baseline->baseline.run_ids, candidates);
  }
  f.reference = SummarizeRuns(series.drift.Reference(), candidates);
  f.run = LoadOf(r.run.conditions);
  return f;
}

}  // namespace

RunJudge::RunJudge(BaselinePolicy policy, const std::vector<std::string>& jobs)
    : policy_(std::move(policy)),
      book_(RegressionTracker::For(policy_), {jobs.begin(), jobs.end()}) {}

void RunJudge::Load(Store& store, int64_t now_ms) {
  book_.Load(store, now_ms);
  windows_.Load(store, now_ms);
}

Result<RunVerdicts> RunJudge::Judge(Store& store, const RunRecord& run, int64_t id,
                                    std::span<const std::string> judge, int64_t now_ms) {
  RunRecord stored_run = run;
  stored_run.id = id;
  StoreBaselineSource source(store, run.job, run.fingerprint, run.device);
  const SeriesKey key{run.job, run.fingerprint, run.device};
  Result<SeriesState*> opened = book_.Open(store, stored_run);
  if (!opened) return ErrorOf(opened);
  SeriesState& series = **opened;
  // The job's other series (its options or its disk changed) are gone.
  std::erase_if(last_verdicts_, [&](const auto& entry) {
    return entry.first != key && entry.first.job == run.job;
  });
  BaselinePolicy policy = policy_;
  if (!judge.empty()) policy.metrics.assign(judge.begin(), judge.end());
  // The runs a kill left unjudged first, then this one; each is logged,
  // counted and its verdict stored as if it had been judged live.
  Result<std::vector<JudgedRun>> judged = book_.CatchUp(stored_run, source, policy, now_ms);
  if (!judged) return ErrorOf(judged);
  Result<RunJudgement> now =
      JudgeRun(stored_run, source, series, book_.Beside(stored_run), policy, now_ms);
  if (!now) return ErrorOf(now);
  judged->push_back({std::move(stored_run), std::move(*now)});
  if (Status saved = book_.Save(store, judged->back().run, *judged); !saved) {
    return ErrorOf(saved);
  }
  // The series' runs, for what the runs judged against were like.
  Result<std::vector<LearningCandidate>> candidates = source.Candidates();
  if (!candidates) return ErrorOf(candidates);
  RunVerdicts out;
  LastJudged& last = last_verdicts_[key];
  for (const JudgedRun& r : *judged) {
    out.judging = windows_.Note(r.run, r.judgement, now_ms);
    LogJudgement(r.run, r.judgement,
                 [&](const RegressionChange& c) { return FactsOf(c, r, series, *candidates); });
    KeepVerdicts(r, *candidates, last);
  }
  for (SeriesVerdict& v : last.verdicts) {
    v.regressed = series.Regressed(v.verdict.op, v.verdict.metric);
    v.drift_ratio = series.drift.Ratio(v.verdict.op, v.verdict.metric);
    v.since_ms = v.regressed ? RegressedSinceMs(series, v.verdict.op, v.verdict.metric) : 0;
  }
  out.verdicts = last.verdicts;
  out.judged_baseline_runs = last.baseline_runs;
  out.judged_load = last.load;
  out.reference_runs = SummarizeRuns(series.drift.Reference(), *candidates);
  out.judgement = std::move(judged->back().judgement);
  return out;
}

// A run that was not judged leaves the last judged run's verdicts (their
// regression states as the hysteresis has them now), with what they were
// judged against and under. None once no baseline is left (a reset).
void RunJudge::KeepVerdicts(const JudgedRun& r, std::span<const LearningCandidate> candidates,
                            LastJudged& last) {
  const RunJudgement& j = r.judgement;
  if (j.judged) {
    last.verdicts.clear();
    for (const MetricVerdict& v : j.verdicts) last.verdicts.push_back({v, false, {}, 0});
    last.baseline_runs =
        j.baseline ? SummarizeRuns(j.baseline->baseline.run_ids, candidates) : std::nullopt;
    last.load = LoadOf(r.run.conditions);
  }
  if (j.baselines == 0) last = {};
}

}  // namespace iowatch::probes
