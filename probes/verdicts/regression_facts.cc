#include "probes/verdicts/regression_facts.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <vector>

#include "probes/verdicts/baseline.h"
#include "probes/verdicts/run_class.h"

namespace iowatch::probes {
namespace {

std::optional<double> MedianOf(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  return Median(values);
}

// "10 runs of 2026-12-01T08:00:00Z to 2026-12-01T10:00:00Z (load 12/s,
// steal 1.0 %)".
std::string DescribeRuns(const RunsSummary& s, const std::function<std::string(int64_t)>& time) {
  std::string out = fmt::format("{} run{} of {} to {}", s.runs, s.runs == 1 ? "" : "s",
                                time(s.first_start_ms), time(s.last_start_ms));
  if (s.foreign_load && s.cpu_steal) {
    out += fmt::format(" ({})", DescribeLoad({*s.foreign_load, *s.cpu_steal}));
  }
  return out;
}

}  // namespace

int64_t RegressedSinceMs(const SeriesState& series, const std::string& op,
                         const std::string& metric) {
  int64_t since = series.tracker.RegressedSinceMs(op, metric);
  if (series.drift.Raised(op, metric)) {
    const auto it = series.drift.All().find(std::make_pair(op, metric));
    if (it != series.drift.All().end() && it->second.since_ms > 0) {
      since = since > 0 ? std::min(since, it->second.since_ms) : it->second.since_ms;
    }
  }
  return since;
}

std::optional<RunLoad> LoadOf(const std::optional<RunConditions>& conditions) {
  if (!conditions) return std::nullopt;
  return RunLoad{ForeignLoad(*conditions), conditions->cpu_steal};
}

std::optional<RunsSummary> SummarizeRuns(std::span<const int64_t> ids,
                                         std::span<const LearningCandidate> candidates) {
  RunsSummary s;
  std::vector<double> loads;
  std::vector<double> steals;
  for (const LearningCandidate& c : candidates) {
    if (std::ranges::find(ids, c.id) == ids.end()) continue;
    s.first_start_ms = s.runs == 0 ? c.start_unix_ms : std::min(s.first_start_ms, c.start_unix_ms);
    s.last_start_ms = std::max(s.last_start_ms, c.start_unix_ms);
    ++s.runs;
    if (const std::optional<RunLoad> load = LoadOf(c.conditions)) {
      loads.push_back(load->foreign_load);
      steals.push_back(load->cpu_steal);
    }
  }
  if (s.runs == 0) return std::nullopt;
  s.with_conditions = loads.size();
  s.foreign_load = MedianOf(std::move(loads));
  s.cpu_steal = MedianOf(std::move(steals));
  return s;
}

std::string FormatUtcIso(int64_t unix_ms) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     fmt::gmtime(static_cast<std::time_t>(unix_ms / 1000)));
}

std::string DescribeLoad(const RunLoad& load) {
  return fmt::format("load {:.0f}/s, steal {:.1f} %", load.foreign_load, load.cpu_steal * 100);
}

std::string DescribeRatios(const RegressionFacts& f) {
  std::string out;
  if (f.ratio > 0) out = fmt::format("{:.2f}x its baseline", f.ratio);
  if (f.drift_ratio) {
    out += fmt::format("{}{:.2f}x its first day", out.empty() ? "" : ", ", *f.drift_ratio);
  }
  return out;
}

std::string DescribeAgainst(const RegressionFacts& f,
                            const std::function<std::string(int64_t)>& time) {
  std::string out;
  if (f.baseline) out = DescribeRuns(*f.baseline, time);
  if (f.reference) {
    out += fmt::format("{}first day {}", out.empty() ? "" : ", ", DescribeRuns(*f.reference, time));
  }
  return out;
}

std::string ExplainRegression(const RegressionFacts& f,
                              const std::function<std::string(int64_t)>& time) {
  std::string out = DescribeRatios(f);
  out += fmt::format("{}bad since {}", out.empty() ? "" : "; ",
                     f.since_ms > 0 ? time(f.since_ms) : std::string("an unknown time"));
  if (const std::string against = DescribeAgainst(f, time); !against.empty()) {
    out += "; judged against " + against;
  }
  if (f.run) out += "; the judged run: " + DescribeLoad(*f.run);
  return out;
}

}  // namespace iowatch::probes
