#include "cli/probe/probe_report.h"

#include <sys/sysmacros.h>

namespace iowatch::daemon {
namespace {

ProbeReportEntry EntryOf(const probes::SetJob& job, const probes::CloneOutcome& clone) {
  return {clone.outcome.result,
          job.options,
          job.groupid,
          clone.outcome.target_path,
          major(clone.outcome.device),
          minor(clone.outcome.device)};
}

}  // namespace

std::vector<ProbeReportEntry> MakeReportEntries(const probes::JobSet& set,
                                                std::span<const probes::CloneOutcome> clones) {
  std::vector<ProbeReportEntry> entries;
  // Per entry, its clones, by index: a result holds four 16 KiB histograms,
  // and a copy of each for entries of one clone doubled the memory of a
  // 4,096-job run. Only a group's members are copied, to be summed.
  std::vector<std::vector<size_t>> members;
  bool last_grouped = false;
  for (size_t i = 0; i < clones.size(); ++i) {
    const probes::SetJob& job = set.jobs[clones[i].job];
    const bool grouped = job.spec.group_reporting;
    if (!(grouped && last_grouped && entries.back().groupid == job.groupid)) {
      entries.push_back(EntryOf(job, clones[i]));
      members.emplace_back();
    }
    members.back().push_back(i);
    last_grouped = grouped;
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (members[i].size() < 2) continue;
    std::vector<probes::ProbeResult> results;
    results.reserve(members[i].size());
    for (const size_t clone : members[i]) results.push_back(clones[clone].outcome.result);
    entries[i].result = probes::SumResults(results);
  }
  return entries;
}

}  // namespace iowatch::daemon
