#include "cli/probe/probe_push.h"

#include <algorithm>
#include <map>

#include "daemon/metrics/probe_metrics_renderer.h"
#include "daemon/scheduling/probe_run_snapshot.h"

namespace iowatch::daemon {

std::string ProbeRunsExposition(const probes::JobSet& jobs,
                                const std::vector<probes::CloneOutcome>& clones,
                                double now_seconds) {
  std::vector<std::string> order;  // job names as they first ran
  std::map<std::string, std::vector<const probes::CloneOutcome*>> by_name;
  for (const probes::CloneOutcome& clone : clones) {
    const std::string& name = jobs.jobs[clone.job].spec.name;
    if (!by_name.contains(name)) order.push_back(name);
    by_name[name].push_back(&clone);
  }
  ProbeSnapshot runs;
  for (const std::string& name : order) {
    const auto& outcomes = by_name[name];
    const bool completed = std::ranges::all_of(outcomes, [](const probes::CloneOutcome* c) {
      return c->outcome.result.end == probes::RunEnd::kCompleted;
    });
    if (!completed) continue;
    std::vector<probes::ProbeResult> results;
    results.reserve(outcomes.size());
    for (const probes::CloneOutcome* c : outcomes) results.push_back(c->outcome.result);
    const probes::ProbeOutcome& first = outcomes.front()->outcome;
    runs.jobs.push_back(
        OneRunSnapshot(name, probes::SumResults(results), first.start_unix_ms, first.device));
  }
  std::string out;
  RenderProbeRunMetrics(runs, now_seconds, out);
  return out;
}

}  // namespace iowatch::daemon
