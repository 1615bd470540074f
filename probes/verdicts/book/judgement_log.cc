#include "probes/verdicts/book/judgement_log.h"

#include <fmt/format.h>

#include <string>

#include "common/log.h"

namespace iowatch::probes {
namespace {

// The load a contended run was judged under, for the log: " (load band 7:
// others did 1,200 IOPS …)"; "" for a clean run.
std::string UnderLoad(const Classification& c) {
  if (c.run_class != RunClass::kContended) return "";
  return fmt::format(" ({}: {})", DescribeBand(c.band), c.load);
}

// A drift (DriftWatch) is no one run's verdict: its ratio is the
// smoothed one to the series' first day, and it began at `since_ms`.
void LogDriftChange(const std::string& job, const RegressionChange& c,
                    const ExplainChange& explain) {
  if (c.regressed) {
    spdlog::warn(
        "probe {}: {} {} regressed: {:.3f} of its first day's level (smoothed), the runs since {} "
        "adding up to a shift no single run showed; {}",
        job, c.op, c.metric, c.verdict.ratio, FormatUtcIso(c.since_ms),
        ExplainRegression(explain(c)));
  } else {
    spdlog::info("probe {}: {} {} recovered: back to {:.3f} of its first day's level", job, c.op,
                 c.metric, c.verdict.ratio);
  }
}

void LogChange(const std::string& job, const RegressionChange& c, const Classification& under,
               const ExplainChange& explain) {
  const MetricVerdict& v = c.verdict;
  if (c.drift) {
    LogDriftChange(job, c, explain);
    return;
  }
  if (c.regressed) {
    spdlog::warn(
        "probe {}: {} {} regressed: {:.6g} against a baseline of {:.6g} (allowed distance "
        "{:.6g}){}; {}",
        job, c.op, c.metric, v.value, v.baseline, v.threshold, UnderLoad(under),
        ExplainRegression(explain(c)));
  } else if (!c.with.empty()) {
    spdlog::info(
        "probe {}: {} {} recovered with {} {} ({:.6g} against a baseline of {:.6g}, ratio "
        "{:.3f}): a quantile is judged in clean runs only, and it was raised in the same slowdown",
        job, c.op, c.metric, c.op, c.with, v.value, v.baseline, v.ratio);
  } else {
    spdlog::info("probe {}: {} {} recovered: {:.6g} against a baseline of {:.6g} (ratio {:.3f})",
                 job, c.op, c.metric, v.value, v.baseline, v.ratio);
  }
}

}  // namespace

void LogJudgement(const RunRecord& run, const RunJudgement& j, const ExplainChange& explain) {
  if (j.learned) {
    spdlog::info("probe {}: baseline of {} learned from {} runs on {}", run.job,
                 DescribeBand(j.baseline->baseline.band), j.baseline->run_count, run.device);
  }
  for (const RegressionChange& c : j.changes) {
    LogChange(run.job, c, j.classification, explain);
  }
  if (j.classification.run_class == RunClass::kContended) {
    spdlog::debug("probe {}: contended: {}", run.job,
                  j.why.empty() ? j.classification.load : j.why);
  }
}

}  // namespace iowatch::probes
