#include "probes/verdicts/job_judge.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <span>
#include <string>
#include <utility>

#include "common/enum_names.h"
#include "probes/verdicts/corroboration.h"
#include "probes/verdicts/load_model.h"
#include "probes/verdicts/run_stress.h"

namespace iowatch::probes {
namespace {

// Restarts the hysteresis when a baseline seen before is gone or replaced;
// a band learning its first baseline keeps it.
void FollowBaselines(const std::vector<StoredBaseline>& baselines, SeriesState& state) {
  std::vector<int64_t> ids;
  ids.reserve(baselines.size());
  for (const StoredBaseline& b : baselines) ids.push_back(b.id);
  std::ranges::sort(ids);
  if (!std::ranges::includes(ids, state.baseline_ids)) state.tracker.Reset();
  state.baseline_ids = std::move(ids);
}

int64_t NewestPinnedMs(const std::vector<StoredBaseline>& baselines) {
  int64_t newest = 0;
  for (const StoredBaseline& b : baselines) {
    if (b.pinned) newest = std::max(newest, b.baseline.created_unix_ms);
  }
  return newest;
}

std::string Progress(size_t runs, int64_t span_ms, const BaselinePolicy& policy) {
  return fmt::format("{} of {} runs over {} of {} min", runs, policy.runs, span_ms / 60000,
                     policy.min_age_ms / 60000);
}

// The earlier of two suspicion starts, 0 meaning none.
int64_t EarliestSuspicion(int64_t a, int64_t b) {
  if (a == 0) return b;
  if (b == 0) return a;
  return std::min(a, b);
}

// Which stored runs a baseline may be made of: none before `after_ms` (the
// newest pinned baseline of the series: a capture or an import is the
// operator's word on what normal is now), since `suspect_since_ms`
// (SeriesState) or within a past suspect span of the series or its disk.
struct LearnableRuns {
  int64_t after_ms = 0;
  int64_t suspect_since_ms = 0;
  std::vector<std::pair<int64_t, int64_t>> spans;

  bool Allows(int64_t start_ms) const {
    if (suspect_since_ms != 0 && start_ms >= suspect_since_ms) return false;
    if (start_ms < after_ms) return false;
    return !std::ranges::any_of(
        spans, [start_ms](const auto& s) { return start_ms >= s.first && start_ms <= s.second; });
  }
};

// The series' and its disk's suspicion, and the newest pinned baseline.
LearnableRuns LearnableOf(const std::vector<StoredBaseline>& baselines, const SeriesState& state,
                          const DeviceSuspicion& device) {
  LearnableRuns learnable{NewestPinnedMs(baselines),
                          EarliestSuspicion(state.suspect_since_ms, device.suspect_since_ms),
                          state.suspect_spans};
  learnable.spans.insert(learnable.spans.end(), device.suspect_spans.begin(),
                         device.suspect_spans.end());
  return learnable;
}

// The runs at `indices` of `ids`, the judged run itself taken as it is.
Result<std::vector<RunRecord>> LoadRuns(const RunRecord& run, std::span<const int64_t> ids,
                                        std::span<const size_t> indices, BaselineSource& source) {
  std::vector<RunRecord> runs;
  for (size_t index : indices) {
    if (ids[index] == run.id) {
      runs.push_back(run);
      continue;
    }
    Result<RunRecord> loaded = source.Load(ids[index]);
    if (!loaded) return ErrorOf(loaded);
    runs.push_back(std::move(*loaded));
  }
  return runs;
}

// Learns the band's baseline when its runs suffice; says why not otherwise.
Status Learn(const RunRecord& run, std::span<const LearningCandidate> candidates,
             BaselineSource& source, const LearnableRuns& learnable, const BaselinePolicy& policy,
             int64_t now_ms, RunJudgement& out) {
  const int band = out.classification.band;
  std::vector<int64_t> ids;
  std::vector<int64_t> starts;
  for (const LearningCandidate& c : candidates) {
    const Classification cls = Classify(c.conditions, policy.contention);
    if (cls.run_class == RunClass::kUnknown || cls.band == kNoBand || cls.band != band) continue;
    if (!learnable.Allows(c.start_unix_ms)) continue;
    ids.push_back(c.id);
    starts.push_back(c.start_unix_ms);
  }
  const std::optional<std::vector<size_t>> picked = PickLearningRuns(starts, policy);
  if (!picked) {
    out.why += fmt::format(
        "{} has no baseline yet ({})", DescribeBand(band),
        Progress(ids.size(), starts.empty() ? 0 : starts.back() - starts.front(), policy));
    return {};
  }
  Result<std::vector<RunRecord>> runs = LoadRuns(run, ids, *picked, source);
  if (!runs) return ErrorOf(runs);
  Baseline learned = LearnBaseline(*runs, now_ms, policy);
  learned.band = band;
  Result<int64_t> id = source.Put(learned);
  if (!id) return ErrorOf(id);
  out.why += fmt::format("the baseline of {} was learned from {} runs up to this one",
                         DescribeBand(band), runs->size());
  out.learned = true;
  const auto count = static_cast<int64_t>(runs->size());
  out.baseline = StoredBaseline{*id, false, count, std::move(learned), {}};
  return {};
}

// The earlier runs a run of other conditions may be judged against: known
// conditions, learnable, oldest first; with their stresses.
struct EarlierRuns {
  std::vector<int64_t> ids;
  std::vector<int64_t> starts;
  std::vector<RunStress> stresses;
};

EarlierRuns EarlierLearnableRuns(const RunRecord& run,
                                 std::span<const LearningCandidate> candidates,
                                 const LearnableRuns& learnable, const BaselinePolicy& policy) {
  EarlierRuns out;
  for (const LearningCandidate& c : candidates) {
    if (c.id == run.id || !c.conditions || c.start_unix_ms >= run.start_unix_ms) continue;
    if (Classify(c.conditions, policy.contention).run_class == RunClass::kUnknown) continue;
    if (!learnable.Allows(c.start_unix_ms)) continue;
    out.ids.push_back(c.id);
    out.starts.push_back(c.start_unix_ms);
    out.stresses.push_back(StressOf(*c.conditions));
  }
  return out;
}

// The load model's baseline at the run's stress (load_model.h), from the
// newest kModelRuns earlier learnable runs; nullopt when it cannot say.
constexpr size_t kModelRuns = 200;

Result<ModelPrediction> ModelAt(const RunStress& at, const EarlierRuns& earlier,
                                BaselineSource& source, const BaselinePolicy& policy) {
  const size_t n = earlier.ids.size();
  if (n < std::max<size_t>(kMinModelRuns, policy.runs)) return ModelPrediction{};
  std::vector<ModelPoint> points;
  for (size_t i = n > kModelRuns ? n - kModelRuns : 0; i < n; ++i) {
    Result<std::vector<MetricSample>> metrics = source.LoadMetrics(earlier.ids[i]);
    if (!metrics) return ErrorOf(metrics);
    points.push_back({earlier.ids[i], earlier.starts[i], earlier.stresses[i], std::move(*metrics)});
  }
  return ModelBaselineAt(at, points, policy);
}

// Says why a run judged against neither the model nor heavier runs was not
// judged. A run outside what the model's runs cover is `outside_model`
// (unless a regression stands, the operator's first concern): the model
// had runs enough, none at such stress, and it does not extrapolate.
void NeitherModelNorHeavier(const ModelPrediction& modelled, const BaselinePolicy& policy,
                            RunJudgement& out) {
  out.why += out.why.empty() ? "" : "; ";
  if (!modelled.outside.empty()) {
    out.why += fmt::format("outside the load model's runs ({}), and ", modelled.outside);
    if (out.reason != NotJudged::kRegressionStanding) out.reason = NotJudged::kOutsideModel;
  }
  out.why += fmt::format("fewer than {} earlier runs at least as stressed over {} min", policy.runs,
                         policy.min_age_ms / 60000);
}

// A run whose band has no baseline (or that has no band: its CPU was
// contended) is judged against earlier runs of other conditions, learnable
// ones only: the load model's prediction at its stress where the model has
// seen such stress, else the nearest policy.runs runs at least as stressed
// in every dimension (run_stress.h), which a healthy run is no worse than.
// The baseline is made for this run and not stored. Says why not when
// neither can be made.
Status JudgeAgainstOtherConditions(const RunRecord& run,
                                   std::span<const LearningCandidate> candidates,
                                   BaselineSource& source, const LearnableRuns& learnable,
                                   const BaselinePolicy& policy, int64_t now_ms,
                                   RunJudgement& out) {
  if (!run.conditions) return {};
  const EarlierRuns earlier = EarlierLearnableRuns(run, candidates, learnable, policy);
  const RunStress stress = StressOf(*run.conditions);
  Result<ModelPrediction> modelled = ModelAt(stress, earlier, source, policy);
  if (!modelled) return ErrorOf(modelled);
  std::optional<Baseline> baseline = std::move(modelled->baseline);
  if (baseline) {
    out.against = fmt::format("the load model at its stress ({} runs)", baseline->run_ids.size());
  } else {
    const std::optional<std::vector<size_t>> picked = PickHeavierNeighbours(
        stress, earlier.stresses, earlier.starts, policy.runs, policy.min_age_ms);
    if (!picked) {
      NeitherModelNorHeavier(*modelled, policy, out);
      return {};
    }
    Result<std::vector<RunRecord>> runs = LoadRuns(run, earlier.ids, *picked, source);
    if (!runs) return ErrorOf(runs);
    baseline = LearnBaseline(*runs, now_ms, policy);
    out.against = fmt::format("the {} nearest runs at least as stressed", runs->size());
    if (!modelled->outside.empty()) {
      out.against += fmt::format(" (outside the load model's runs: {})", modelled->outside);
    }
  }
  baseline->job = run.job;
  baseline->fingerprint = run.fingerprint;
  baseline->device = run.device;
  baseline->model = run.model;
  baseline->band = out.classification.band;
  baseline->created_unix_ms = now_ms;
  out.other_conditions = true;
  const auto count = static_cast<int64_t>(baseline->run_ids.size());
  out.baseline = StoredBaseline{0, false, count, std::move(*baseline), {}};
  return {};
}

// Learns the run's own band's baseline, unless it has none (its CPU was
// contended) or a regression stands; sets why not and the reason.
Status LearnOwnBand(const RunRecord& run, std::span<const LearningCandidate> candidates,
                    BaselineSource& source, const SeriesState& state, const DeviceSuspicion& device,
                    const LearnableRuns& learnable, const BaselinePolicy& policy, int64_t now_ms,
                    RunJudgement& out) {
  const Classification& c = out.classification;
  if (c.band == kNoBand) return {};
  if (state.AnyRegressed() || device.regressed) {
    out.why += fmt::format("{} has no baseline, and none is learned while a regression stands{}",
                           DescribeBand(c.band),
                           state.AnyRegressed() ? "" : " (another job's, same disk)");
    out.reason = NotJudged::kRegressionStanding;
    return {};
  }
  out.reason = NotJudged::kLearning;
  return Learn(run, candidates, source, learnable, policy, now_ms, out);
}

// The why-text's start for a run's class; true when the class alone rules
// judging out (the reason set).
bool ClassRulesOutJudging(const Classification& c, const ContentionPolicy& policy,
                          RunJudgement& out) {
  std::string& why = out.why;
  if (c.run_class == RunClass::kUnknown) {
    // Stored before iowatch measured conditions, or the probe's device has no
    // I/O statistics (a directory on tmpfs, NFS or overlayfs).
    why = "its conditions are unknown (no I/O statistics of its device for the run)";
    out.reason = NotJudged::kUnknownConditions;
    return true;
  }
  if (c.run_class != RunClass::kContended) return false;
  why = fmt::format("contended ({}): ", c.load);
  if (!policy.bands) {
    why += "contended runs are not judged (bands are off)";
    out.reason = NotJudged::kBandsOff;
    return true;
  }
  if (c.band == kNoBand) {
    // Judged only against runs at least as stressed (JudgeAgainstHeavier).
    why += "its CPU was contended (its thread waited, or the hypervisor took it)";
    out.reason = NotJudged::kCpuContended;
  }
  return false;
}

// The hysteresis, and since when the series is suspect: a bad judged run
// starts it; a good judged run ends it when no regression stands and it broke
// every bad streak (a good run in a band too wide to see the shift leaves
// the series suspect: RegressionTracker).
void Track(const RunRecord& run, SeriesState& state, RunJudgement& out) {
  const bool at_own_level = out.classification.run_class == RunClass::kClean &&
                            !out.other_conditions && out.baseline &&
                            out.baseline->baseline.band == kCleanBand;
  out.changes = state.tracker.Update(out.verdicts, run.start_unix_ms,
                                     run.start_unix_ms + run.duration_ms, at_own_level);
  const bool any_bad =
      std::ranges::any_of(out.verdicts, [](const MetricVerdict& v) { return v.judged && v.bad; });
  if (any_bad && state.suspect_since_ms == 0) state.suspect_since_ms = run.start_unix_ms;
  const bool resolved = !state.AnyRegressed() && !state.tracker.AnyPending();
  if (!any_bad && out.judged && resolved && state.suspect_since_ms != 0) {
    state.suspect_spans.emplace_back(state.suspect_since_ms, run.start_unix_ms);
    if (state.suspect_spans.size() > SeriesState::kMaxSuspectSpans) {
      state.suspect_spans.erase(state.suspect_spans.begin());
    }
    state.suspect_since_ms = 0;
  }
}

// A contended run's latency quantiles above policy.max_quantile are not
// judged (ContentionPolicy::max_quantile: they are the neighbours' timing),
// nor those of a run judged against runs of other conditions (their
// stresses differ, and quantiles are what stress moves most).
void SetAsideTailsUnderLoad(const RunJudgement& j, const ContentionPolicy& policy,
                            std::vector<MetricVerdict>& verdicts) {
  if (j.classification.run_class != RunClass::kContended && !j.other_conditions) return;
  for (MetricVerdict& v : verdicts) {
    const MetricSpec* spec = FindMetric(v.metric);
    if (spec == nullptr || spec->quantile <= policy.max_quantile) continue;
    v.judged = false;
    v.bad = false;
    v.note = policy.max_quantile > 0
                 ? fmt::format(
                       "a quantile beside others' load: contended runs judge quantiles "
                       "up to p{:g}",
                       100 * policy.max_quantile)
                 : std::string(
                       "a quantile beside others' load: contended runs judge IOPS, "
                       "bandwidth and the mean only");
  }
}

// The series' runs stored up to `run` (its id) only: a run judged again
// after a kill (probes/verdicts/book/series_book.h) has later runs in the
// source, and a baseline (or model) made with them would know the future.
Result<std::vector<LearningCandidate>> CandidatesUpTo(const RunRecord& run,
                                                      BaselineSource& source) {
  Result<std::vector<LearningCandidate>> candidates = source.Candidates();
  if (candidates) {
    std::erase_if(*candidates,
                  [&run](const LearningCandidate& later) { return later.id > run.id; });
  }
  return candidates;
}

}  // namespace

void DeviceSuspicion::Add(const SeriesState& other) {
  regressed = regressed || other.AnyRegressed();
  suspect_since_ms = EarliestSuspicion(suspect_since_ms, other.suspect_since_ms);
  suspect_spans.insert(suspect_spans.end(), other.suspect_spans.begin(), other.suspect_spans.end());
}

constexpr EnumName<NotJudged> kNotJudgedNames[] = {
    {NotJudged::kJudged, "judged"},
    {NotJudged::kUnknownConditions, "unknown_conditions"},
    {NotJudged::kCpuContended, "cpu_contended"},
    {NotJudged::kBandsOff, "bands_off"},
    {NotJudged::kLearning, "learning"},
    {NotJudged::kRegressionStanding, "regression_standing"},
    {NotJudged::kNoMetric, "no_metric"},
    {NotJudged::kOutsideModel, "outside_model"}};
static_assert(NamesEveryValue<kNotJudgedNames>());

std::string_view ToString(NotJudged reason) { return NameIn<NotJudged>(kNotJudgedNames, reason); }

std::string DescribeBand(int band) {
  if (band == kCleanBand) return "quiet runs";
  return fmt::format("load band {} ({:.0f}–{:.0f} weighted requests/s)", band, LoadBandLow(band),
                     LoadBandHigh(band));
}

namespace {

// The reference's points, loaded once per daemon life (the ids are stored).
Status LoadReference(BaselineSource& source, DriftWatch& drift) {
  std::vector<ModelPoint>& points = drift.PointsCache();
  if (points.size() == drift.Reference().size()) return {};
  points.clear();
  for (const int64_t id : drift.Reference()) {
    Result<RunRecord> run = source.Load(id);
    if (!run) return ErrorOf(run);
    if (!run->conditions) continue;
    points.push_back({id, run->start_unix_ms, StressOf(*run->conditions), std::move(run->metrics)});
  }
  return {};
}

// The drift watch's reference (drift_watch.h) at the run's stress: chosen
// once the series' learnable runs before this one span a day; nullopt before
// that, or where the reference's day did not cover the run's stress.
Result<std::optional<Baseline>> ReferenceAt(const RunRecord& run, BaselineSource& source,
                                            SeriesState& state, const DeviceSuspicion& device,
                                            const std::vector<StoredBaseline>& baselines,
                                            const BaselinePolicy& policy) {
  if (!run.conditions) return std::nullopt;
  DriftWatch& drift = state.drift;
  const int64_t pinned = NewestPinnedMs(baselines);
  if (pinned > drift.ReferenceAfterMs()) drift.Restart(pinned);
  if (drift.Reference().empty()) {
    Result<std::vector<LearningCandidate>> candidates = CandidatesUpTo(run, source);
    if (!candidates) return ErrorOf(candidates);
    const LearnableRuns learnable = LearnableOf(baselines, state, device);
    std::vector<int64_t> ids;
    std::vector<int64_t> starts;
    for (const LearningCandidate& c : *candidates) {
      if (c.id >= run.id || !c.conditions || !learnable.Allows(c.start_unix_ms)) continue;
      if (Classify(c.conditions, policy.contention).run_class == RunClass::kUnknown) continue;
      ids.push_back(c.id);
      starts.push_back(c.start_unix_ms);
    }
    if (!drift.ChooseReference(ids, starts, pinned)) return std::nullopt;
  }
  if (Status loaded = LoadReference(source, drift); !loaded) return ErrorOf(loaded);
  return ModelBaselineAt(StressOf(*run.conditions), drift.PointsCache(), policy).baseline;
}

// The disk's run-to-run noise as the reference knows it: its prediction at
// the run's stress, else (a stress its day did not cover) at its first
// run's, whose spread is the same residuals' (the noise, not the level, is
// what a band's baseline borrows); each metric's spread scaled by how far
// the calibration's runs of the run's class scattered (DriftWatch::Scatter),
// where that is wider.
std::optional<Baseline> NoiseOf(const RunRecord& run, const std::optional<Baseline>& at_run,
                                const DriftWatch& drift, const BaselinePolicy& policy) {
  std::optional<Baseline> noise = at_run;
  if (!noise && !drift.Points().empty()) {
    noise = ModelBaselineAt(drift.Points().front().stress, drift.Points(), policy).baseline;
  }
  if (!noise) return noise;
  const bool clean = Classify(run.conditions, policy.contention).run_class == RunClass::kClean;
  for (MetricBaseline& m : noise->metrics) {
    const std::optional<double> scatter = drift.Scatter(m.op, m.metric, run.start_unix_ms, clean);
    if (!scatter || *scatter <= 1 || m.median <= 0) continue;
    m.spread = std::expm1(std::log1p(m.spread / m.median) * *scatter) * m.median;
  }
  return noise;
}

// A band's baseline is learned from policy.runs runs (10): its spread can be
// half the disk's run-to-run noise, and then ordinary runs are bad three in
// a row now and then (on the simulated fleet, 14 of 18 raises on healthy
// disks were of band baselines with spreads of 5-8 % on disks whose runs
// scatter by 10 %). Where the drift watch's reference (a day of runs, 96 or
// more) says what the disk's noise is at the run's stress, the spread is at
// least that share of the baseline's median.
Baseline WidenedToNoise(const Baseline& baseline, const Baseline& noise) {
  Baseline widened = baseline;
  for (MetricBaseline& m : widened.metrics) {
    const auto same = std::ranges::find_if(noise.metrics, [&](const MetricBaseline& r) {
      return r.op == m.op && r.metric == m.metric && r.median > 0;
    });
    if (same == noise.metrics.end()) continue;
    m.spread = std::max(m.spread, same->spread / same->median * m.median);
  }
  return widened;
}

// The run's verdicts against its band's baseline, or other conditions' runs,
// each bad one checked against the drift watch's reference at the run's
// stress where there is one (`reference`: corroboration.h), and the
// hysteresis they feed.
Result<RunJudgement> JudgeAgainstBaselines(const RunRecord& run, BaselineSource& source,
                                           SeriesState& state, const DeviceSuspicion& device,
                                           const std::vector<StoredBaseline>& stored,
                                           const Baseline* reference, const Baseline* noise,
                                           const BaselinePolicy& policy, int64_t now_ms) {
  RunJudgement out;
  const std::vector<StoredBaseline>* baselines = &stored;
  out.baselines = baselines->size();
  out.classification = Classify(run.conditions, policy.contention);
  const Classification& c = out.classification;
  if (ClassRulesOutJudging(c, policy.contention, out)) return out;
  const auto own = c.band == kNoBand
                       ? baselines->end()
                       : std::ranges::find(*baselines, c.band,
                                           [](const StoredBaseline& b) { return b.baseline.band; });
  if (own != baselines->end()) {
    out.baseline = *own;
  } else {
    Result<std::vector<LearningCandidate>> candidates = CandidatesUpTo(run, source);
    if (!candidates) return ErrorOf(candidates);
    const LearnableRuns learnable = LearnableOf(*baselines, state, device);
    if (Status learned =
            LearnOwnBand(run, *candidates, source, state, device, learnable, policy, now_ms, out);
        !learned) {
      return ErrorOf(learned);
    }
    if (out.learned) {
      ++out.baselines;
      state.baseline_ids.push_back(out.baseline->id);
      std::ranges::sort(state.baseline_ids);
      // The run that completes a baseline is compared with it too, so the
      // ratios appear at once (usually good: the baseline is partly made of it).
    } else if (Status other = JudgeAgainstOtherConditions(run, *candidates, source, learnable,
                                                          policy, now_ms, out);
               !other) {
      return ErrorOf(other);
    }
    if (!out.baseline) return out;
  }
  const Baseline& baseline = out.baseline->baseline;
  out.verdicts = noise != nullptr && !out.other_conditions
                     ? Compare(WidenedToNoise(baseline, *noise), run.metrics, policy, &run.result)
                     : Compare(baseline, run.metrics, policy, &run.result);
  SetAsideTailsUnderLoad(out, policy.contention, out.verdicts);
  if (reference != nullptr) SetAsideUncorroborated(*reference, run.metrics, policy, out.verdicts);
  out.judged = std::ranges::any_of(out.verdicts, &MetricVerdict::judged);
  if (out.judged) {
    out.why.clear();
    out.reason = NotJudged::kJudged;
  } else {
    out.reason = NotJudged::kNoMetric;
    out.why += out.learned ? "; " : "";
    out.why += out.verdicts.empty()
                   ? "its baseline has none of the metrics judged"
                   : "it carries none of the metrics judged (too few I/Os for the quantiles)";
  }
  Track(run, state, out);
  return out;
}

// One change per change of the combined state (SeriesState::Regressed): a
// hysteresis change on a metric the drift watch holds raised (`drift_before`)
// changes nothing, nor does a drift change on one the hysteresis holds.
void MergeDriftChanges(const SeriesState& state,
                       const std::set<std::pair<std::string, std::string>>& drift_before,
                       const std::vector<DriftWatch::Change>& drift, RunJudgement& out) {
  std::erase_if(out.changes, [&](const RegressionChange& c) {
    return drift_before.contains({c.op, c.metric});
  });
  for (const DriftWatch::Change& d : drift) {
    if (state.tracker.Regressed(d.op, d.metric)) continue;
    RegressionChange change;
    change.op = d.op;
    change.metric = d.metric;
    change.regressed = d.raised;
    change.verdict.op = d.op;
    change.verdict.metric = d.metric;
    change.verdict.ratio = d.ratio;
    change.verdict.bad = d.raised;
    change.drift = true;
    change.since_ms = d.since_ms;
    out.changes.push_back(std::move(change));
  }
}

}  // namespace

Result<RunJudgement> JudgeRun(const RunRecord& run, BaselineSource& source, SeriesState& state,
                              const DeviceSuspicion& device, const BaselinePolicy& policy,
                              int64_t now_ms) {
  Result<std::vector<StoredBaseline>> baselines = source.Baselines();
  if (!baselines) return ErrorOf(baselines);
  FollowBaselines(*baselines, state);
  std::set<std::pair<std::string, std::string>> drift_before;
  for (const auto& [key, evidence] : state.drift.All()) {
    if (evidence.raised) drift_before.insert(key);
  }
  Result<std::optional<Baseline>> reference =
      ReferenceAt(run, source, state, device, *baselines, policy);
  if (!reference) return ErrorOf(reference);
  const std::optional<Baseline> noise = NoiseOf(run, *reference, state.drift, policy);
  Result<RunJudgement> out = JudgeAgainstBaselines(run, source, state, device, *baselines,
                                                   *reference ? &**reference : nullptr,
                                                   noise ? &*noise : nullptr, policy, now_ms);
  if (!out) return out;
  if (out->reason == NotJudged::kUnknownConditions || out->reason == NotJudged::kBandsOff) {
    return out;
  }
  std::vector<DriftWatch::Change> drift;
  if (*reference) {
    drift = state.drift.Update(**reference, run.metrics, policy, run.start_unix_ms,
                               run.start_unix_ms + run.duration_ms,
                               out->classification.run_class == RunClass::kClean);
  }
  MergeDriftChanges(state, drift_before, drift, *out);
  for (const DriftWatch::Change& d : drift) {
    // No band learns from a drifted disk's runs.
    if (d.raised && state.suspect_since_ms == 0) state.suspect_since_ms = d.since_ms;
  }
  return out;
}

}  // namespace iowatch::probes
