// RunJudge: the one place a stored probe run becomes its verdicts. It judges
// the run against its series' baselines (after the runs of the series a kill
// left unjudged, SeriesBook::CatchUp), stores the series' state with the
// verdicts, counts the run in its job's judged window, logs what it learned
// and each regression it raised or cleared (each raise with its facts), and
// returns what the daemon publishes: the verdicts with their hysteresis
// state, what they were judged against and under, and the job's judged
// share. A run that was not judged leaves its series' last judged verdicts
// (the series must not vanish, and an alert reset, because one run was
// contended).
//
// Thread-safety: none; the recorder calls it with its store mutex held.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "probes/store/store.h"
#include "probes/verdicts/baseline.h"
#include "probes/verdicts/book/judged_window.h"
#include "probes/verdicts/book/series_book.h"
#include "probes/verdicts/job_judge.h"
#include "probes/verdicts/regression_facts.h"

namespace iowatch::probes {

// A metric's verdict as published.
struct SeriesVerdict {
  MetricVerdict verdict;   // the last successful run against the baseline
  bool regressed = false;  // the hysteresis state after that run
  // The metric's value / its reference of the series' first day, smoothed
  // (DriftWatch); none before the reference judged a run.
  std::optional<double> drift_ratio;
  // While regressed: the start of the first bad run (of the streak that
  // raised it, or of a drift's evidence), ms since the epoch; 0 otherwise,
  // or unknown (raised before iowatch kept it).
  int64_t since_ms = 0;
};

// What judging one run found, for the published state.
struct RunVerdicts {
  RunJudgement judgement;
  std::vector<SeriesVerdict> verdicts;  // with the hysteresis state after the run
  JudgedSummary judging;                // the job's runs of the last 24 h, this one included
  // What the verdicts' run was judged against and under.
  std::optional<RunsSummary> judged_baseline_runs;
  std::optional<RunsSummary> reference_runs;
  std::optional<RunLoad> judged_load;
};

class RunJudge {
 public:
  // `policy`: the baseline policy (its metrics replaced by a job's own
  // `judge` list); `jobs`: the configured jobs, whose stored states Load
  // restores.
  RunJudge(BaselinePolicy policy, const std::vector<std::string>& jobs);

  // The store (re)opened: the series' states and the judged windows from it.
  void Load(Store& store, int64_t now_ms);
  // The job's judged share of the last 24 h.
  JudgedSummary Summarize(const std::string& job, int64_t now_ms) {
    return windows_.Summarize(job, now_ms);
  }
  // Judges `run`, stored with `id`, a successful run of a job judging
  // `judge` metrics (empty: the policy's).
  Result<RunVerdicts> Judge(Store& store, const RunRecord& run, int64_t id,
                            std::span<const std::string> judge, int64_t now_ms);

 private:
  struct LastJudged {
    std::vector<SeriesVerdict> verdicts;
    std::optional<RunsSummary> baseline_runs;  // of the baseline they were judged against
    std::optional<RunLoad> load;               // of their run
  };
  // A probe series: the job, its options' fingerprint and its device.
  struct SeriesKey {
    std::string job;
    std::string fingerprint;
    std::string device;
    auto operator<=>(const SeriesKey&) const = default;
  };
  // Keeps a judged run's verdicts, and what they were judged against and
  // under, as the series' last.
  static void KeepVerdicts(const JudgedRun& r, std::span<const LearningCandidate> candidates,
                           LastJudged& last);

  const BaselinePolicy policy_;
  // The verdict state per series, kept across runs and restarts.
  SeriesBook book_;
  // Per job, whether its runs of the last 24 h were judged.
  JudgedWindows windows_;
  // Each series' last judged verdicts, published while runs are not judged.
  std::map<SeriesKey, LastJudged> last_verdicts_;
};

}  // namespace iowatch::probes
