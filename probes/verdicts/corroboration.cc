#include "probes/verdicts/corroboration.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace iowatch::probes {
namespace {

// The reference's metric a verdict is checked against: its own, or for p50
// and p90 the op's mean; nullptr for the tail and what the reference lacks.
const MetricBaseline* CheckedAgainst(const Baseline& reference, const MetricVerdict& v) {
  const MetricSpec* spec = FindMetric(v.metric);
  if (spec == nullptr || spec->is_latency_tail) return nullptr;
  const std::string_view name =
      spec->quantile > 0 ? std::string_view("lat_mean_seconds") : std::string_view(v.metric);
  const auto it = std::ranges::find_if(reference.metrics, [&](const MetricBaseline& m) {
    return m.op == v.op && m.metric == name && m.median > 0;
  });
  return it == reference.metrics.end() ? nullptr : &*it;
}

}  // namespace

void SetAsideUncorroborated(const Baseline& reference, std::span<const MetricSample> run,
                            const BaselinePolicy& policy, std::vector<MetricVerdict>& verdicts) {
  const std::vector<MetricVerdict> against_reference = Compare(reference, run, policy);
  for (MetricVerdict& v : verdicts) {
    if (!v.bad) continue;
    const MetricBaseline* expected = CheckedAgainst(reference, v);
    if (expected == nullptr) continue;
    const auto checked = std::ranges::find_if(against_reference, [&](const MetricVerdict& r) {
      return r.op == expected->op && r.metric == expected->metric;
    });
    if (checked == against_reference.end() || checked->bad) continue;
    v.bad = false;
    v.note = fmt::format(
        "worse than its baseline, not than the series' first day at the run's stress ({} {:.2f}x "
        "of it, {:.0f} % allowed)",
        expected->metric, checked->ratio, 100 * checked->threshold / expected->median);
  }
}

}  // namespace iowatch::probes
