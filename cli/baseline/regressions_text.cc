#include "cli/baseline/regressions_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "cli/baseline/baseline_table.h"
#include "common/terminal_text.h"
#include "probes/verdicts/job_judge.h"
#include "probes/verdicts/run_class.h"

namespace iowatch::daemon {
namespace {

using probes::RegressionFacts;
using probes::SeriesState;

// How many of the series' newest runs are searched for one its bands judge.
constexpr size_t kRecentRuns = 50;

// The (op, metric)s regressed in the series: by its hysteresis or its drift.
std::set<std::pair<std::string, std::string>> Regressed(const SeriesState& state) {
  std::set<std::pair<std::string, std::string>> out;
  for (const probes::RegressionTracker::Entry& e : state.tracker.Entries()) {
    if (e.streaks.regressed) out.emplace(e.op, e.metric);
  }
  for (const auto& [key, evidence] : state.drift.All()) {
    if (evidence.raised) out.insert(key);
  }
  return out;
}

// The series' newest successful run whose band has a baseline, and that
// baseline: what the ratio to the baseline is of.
struct Judged {
  probes::RunRecord run;
  probes::StoredBaseline baseline;
};
Result<std::optional<Judged>> NewestJudged(const probes::Store& store,
                                           const probes::StoredSeriesState& s,
                                           const probes::BaselinePolicy& policy) {
  Result<std::vector<probes::StoredBaseline>> baselines =
      store.SeriesBaselines(s.job, s.fingerprint, s.device);
  if (!baselines) return ErrorOf(baselines);
  Result<std::vector<probes::RunRecord>> recent =
      store.RecentRuns(s.job, s.fingerprint, s.device, kRecentRuns, true);
  if (!recent) return ErrorOf(recent);
  for (probes::RunRecord& run : *recent) {
    const int band = probes::Classify(run.conditions, policy.contention).band;
    const auto b = std::ranges::find_if(
        *baselines, [&](const probes::StoredBaseline& x) { return x.baseline.band == band; });
    if (b != baselines->end()) return std::optional<Judged>(Judged{std::move(run), *b});
  }
  return std::optional<Judged>();
}

Result<std::vector<RegressionFacts>> FactsOf(const probes::Store& store,
                                             const probes::StoredSeriesState& s,
                                             const probes::BaselinePolicy& policy) {
  std::vector<RegressionFacts> out;
  const auto regressed = Regressed(s.state);
  if (regressed.empty()) return out;
  Result<std::vector<probes::LearningCandidate>> candidates =
      store.SeriesCandidates(s.job, s.fingerprint, s.device);
  if (!candidates) return ErrorOf(candidates);
  Result<std::optional<Judged>> judged = NewestJudged(store, s, policy);
  if (!judged) return ErrorOf(judged);
  std::vector<probes::MetricVerdict> verdicts;
  if (*judged) {
    verdicts = probes::Compare((*judged)->baseline.baseline, (*judged)->run.metrics, policy,
                               &(*judged)->run.result);
  }
  for (const auto& [op, metric] : regressed) {
    RegressionFacts f;
    f.op = op;
    f.metric = metric;
    const auto v = std::ranges::find_if(
        verdicts, [&](const probes::MetricVerdict& x) { return x.op == op && x.metric == metric; });
    if (v != verdicts.end()) f.ratio = v->ratio;
    f.drift_ratio = s.state.drift.Ratio(op, metric);
    f.since_ms = probes::RegressedSinceMs(s.state, op, metric);
    if (*judged) {
      f.baseline = probes::SummarizeRuns((*judged)->baseline.baseline.run_ids, *candidates);
      f.run = probes::LoadOf((*judged)->run.conditions);
    }
    f.reference = probes::SummarizeRuns(s.state.drift.Reference(), *candidates);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::string FormatRegressions(std::string_view job, std::string_view device,
                              std::string_view fingerprint,
                              std::span<const probes::RegressionFacts> facts) {
  if (facts.empty()) return "";
  std::string out = fmt::format("regressions of {} on {} (params {}):\n", TerminalText(job),
                                TerminalText(device), ShortFingerprint(fingerprint));
  for (const RegressionFacts& f : facts) {
    out += fmt::format("  {} {}: {}\n", TerminalText(f.op), TerminalText(f.metric),
                       probes::ExplainRegression(f, FormatLocalIso));
  }
  return out + "\n";
}

Status AppendRegressions(const probes::Store& store, std::string_view job,
                         const probes::BaselinePolicy& policy, std::string& out) {
  std::vector<probes::UnreadableSeriesState> unreadable;  // the daemon quarantines those
  Result<std::vector<probes::StoredSeriesState>> states =
      store.SeriesStates(probes::RegressionTracker::For(policy), unreadable);
  if (!states) return ErrorOf(states);
  for (const probes::StoredSeriesState& s : *states) {
    if (s.job != job) continue;
    Result<std::vector<RegressionFacts>> facts = FactsOf(store, s, policy);
    if (!facts) return ErrorOf(facts);
    out += FormatRegressions(s.job, s.device, s.fingerprint, *facts);
  }
  return {};
}

}  // namespace iowatch::daemon
