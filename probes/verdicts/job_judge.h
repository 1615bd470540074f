// JudgeRun: the verdict on one run of a probe series (a job's runs with one
// parameter fingerprint on one device), in one place for the daemon
// (ProbeRecorder, over the store) and the replay harness (tests/bench/
// verdicts, over recorded runs), so the figures in docs/benchmarks.md are the
// daemon's.
//
// For a successful run: classify it (run_class.h); a run whose conditions are
// unknown is never judged nor learned from, a contended one never against the
// clean baseline. If its band has a baseline, compare the run with it (Compare,
// with the quantile rules) and feed the series' hysteresis, which is one per
// (op, metric) across bands: a slower disk is slower in every band, and a
// good run in a band too wide to see the shift does not break a streak
// (RegressionTracker).
// Otherwise, once the band has policy.runs runs over policy.min_age_ms, a
// baseline is learned from runs spread evenly over them (PickLearningRuns,
// LearnBaseline) and stored. A run whose band has none yet, or that has no
// band (its CPU was contended), is judged against runs of other conditions:
// the load model's prediction at its stress where the model's runs cover it
// (load_model.h: never extrapolated), else the nearest runs at least as
// stressed (run_stress.h), else it is not judged (`outside_model` when the
// model had runs enough but none at such stress); such a baseline is made
// for the run, never stored, and judges throughput and the mean only. No band learns while a
// regression stands, nor from runs since the first bad verdict that is still unresolved, in this
// series or another on the same device (DeviceSuspicion): a disk that became slow must not teach a
// new band that slow is normal. (The daemon keeps the state in the store across restarts:
// probes/verdicts/book/series_book.h.) A baseline replaced or deleted behind the series' back
// (`iowatch baseline capture`, `reset`, `import`) restarts the hysteresis.
//
// Thread-safety: none; the caller serialises the runs of a series.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "probes/verdicts/baseline.h"
#include "probes/verdicts/drift_watch.h"
#include "probes/verdicts/run_class.h"
#include "probes/verdicts/run_record.h"

namespace iowatch::probes {

struct StoredBaseline {
  int64_t id = 0;
  bool pinned = false;    // given by an operator (import) rather than learned here
  int64_t run_count = 0;  // runs it was built from; an imported one has no local run_ids
  Baseline baseline;
  // Exchange only (store_json.h): the firmware revision of the device the
  // baseline was taken on, read when exported; "" when unknown. The store
  // keeps no firmware, so a baseline read from it has none.
  std::string firmware;
};

// A successful run of the series, as learning needs it.
struct LearningCandidate {
  int64_t id = 0;
  int64_t start_unix_ms = 0;
  std::optional<RunConditions> conditions;
};

// Where a series' baselines and runs live: the store, or a recording.
class BaselineSource {
 public:
  virtual ~BaselineSource() = default;
  // Every band's baseline of the series.
  virtual Result<std::vector<StoredBaseline>> Baselines() = 0;
  // The series' successful runs since its last reset, oldest first.
  virtual Result<std::vector<LearningCandidate>> Candidates() = 0;
  virtual Result<RunRecord> Load(int64_t id) = 0;
  // A run's metrics alone (what the load model learns from); Load's by default.
  virtual Result<std::vector<MetricSample>> LoadMetrics(int64_t id) {
    Result<RunRecord> run = Load(id);
    if (!run) return ErrorOf(run);
    return std::move(run->metrics);
  }
  // Stores a learned baseline (replacing its band's); returns its id.
  virtual Result<int64_t> Put(const Baseline& baseline) = 0;
};

// What a series remembers between runs.
struct SeriesState {
  RegressionTracker tracker;
  std::vector<int64_t> baseline_ids;  // the baselines seen last run, sorted
  // The start of the first bad judged run since the last all-good one with
  // no regression standing (0: none): runs from then on may be of a slower
  // disk, so no band learns from them, even before the hysteresis raises.
  int64_t suspect_since_ms = 0;
  // The suspect spans that ended, [first bad run's start, the resolving
  // run's start], the newest kMaxSuspectSpans: their runs are never learned
  // from either. A slowdown that came and went leaves its runs in bands the
  // healthy disk rarely visits (a throttled QD1 write does fewer requests,
  // so the same load is a larger share beside it), and once it resolved
  // those bands would learn the slow disk as their norm from them.
  std::vector<std::pair<int64_t, int64_t>> suspect_spans;
  static constexpr size_t kMaxSuspectSpans = 64;
  // The evidence added up against the series' first day (drift_watch.h).
  DriftWatch drift;

  // A regression stands on the metric: the hysteresis's, or the drift watch's.
  bool Regressed(std::string_view op, std::string_view metric) const {
    return tracker.Regressed(op, metric) || drift.Raised(op, metric);
  }
  bool AnyRegressed() const { return tracker.AnyRegressed() || drift.AnyRaised(); }
};

// What the other series on a run's device say about the disk: a slower disk
// slows every job on it, so one job's regression (or unresolved bad verdict)
// keeps every band of every job there from learning, not only its own. Else
// a job whose runs land in a band it has no baseline for would learn the
// slow disk as its norm while another job is raising the alarm.
struct DeviceSuspicion {
  bool regressed = false;        // a regression stands in one of them
  int64_t suspect_since_ms = 0;  // the earliest suspect_since_ms among them (0: none)
  std::vector<std::pair<int64_t, int64_t>> suspect_spans;  // theirs, all together

  void Add(const SeriesState& other);
};

// Why a run was not judged, in a few words that can be a label value and
// be counted (the daemon's iowatch_probe_not_judged_runs).
enum class NotJudged {
  kJudged,              // it was
  kUnknownConditions,   // no I/O statistics of its device for the run
  kCpuContended,        // its thread waited for a CPU, or the hypervisor took it
  kBandsOff,            // contended, and contended runs are not judged
  kLearning,            // its band has no baseline yet
  kRegressionStanding,  // its band has none, and none is learned while a regression stands
  kNoMetric,            // it carries none of the metrics judged (too few I/Os)
  // Its band has no baseline (or it has no band), the load model's runs
  // never saw its stress (it does not extrapolate), and too few earlier runs
  // were at least as stressed.
  kOutsideModel,
};
// "judged", "unknown_conditions", "cpu_contended", "bands_off", "learning",
// "regression_standing", "no_metric", "outside_model".
std::string_view ToString(NotJudged reason);
inline constexpr std::array kNotJudgedReasons = {
    NotJudged::kUnknownConditions, NotJudged::kCpuContended,       NotJudged::kBandsOff,
    NotJudged::kLearning,          NotJudged::kRegressionStanding, NotJudged::kNoMetric,
    NotJudged::kOutsideModel};

struct RunJudgement {
  Classification classification;
  // At least one metric was judged against a baseline.
  bool judged = false;
  // Why the run was not judged, for logs and `baseline show` ("" when judged):
  // "contended (others did …): load band 7 has no baseline yet (3 of 10 runs)".
  std::string why;
  NotJudged reason = NotJudged::kJudged;
  // The baseline the run was judged against, or that it completed.
  std::optional<StoredBaseline> baseline;
  bool learned = false;  // `baseline` was learned by this run
  // `baseline` was made for this run from earlier runs of other conditions
  // (its band had none, or it has no band): the load model's prediction at
  // its stress, or the nearest runs at least as stressed; not stored, id 0.
  bool other_conditions = false;
  // What such a baseline was made from, for logs and the status page: "the
  // load model at its stress (200 runs)" or "the 10 nearest runs at least as
  // stressed"; "" otherwise.
  std::string against;
  size_t baselines = 0;  // the series' baselines, all bands, after this run
  std::vector<MetricVerdict> verdicts;
  std::vector<RegressionChange> changes;
};

// `run` must be a successful run already in the source (its id set); it is
// judged from the source's runs up to it (ids up to run.id), never later
// ones, so a run judged again after later runs were stored is judged as it
// was live. `device` sums up the other series on its device; now_ms stamps
// a baseline it completes.
Result<RunJudgement> JudgeRun(const RunRecord& run, BaselineSource& source, SeriesState& state,
                              const DeviceSuspicion& device, const BaselinePolicy& policy,
                              int64_t now_ms);

// "quiet runs" (band 0) or "load band 7 (2048–4096 weighted requests/s)".
std::string DescribeBand(int band);

}  // namespace iowatch::probes
