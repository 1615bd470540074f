#include "daemon/cli/probe/probe_report.h"

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
  std::vector<std::vector<probes::ProbeResult>> members;  // per entry, its clones
  bool last_grouped = false;
  for (const probes::CloneOutcome& clone : clones) {
    const probes::SetJob& job = set.jobs[clone.job];
    const bool grouped = job.spec.group_reporting;
    if (!(grouped && last_grouped && entries.back().groupid == job.groupid)) {
      entries.push_back(EntryOf(job, clone));
      members.emplace_back();
    }
    members.back().push_back(clone.outcome.result);
    last_grouped = grouped;
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (members[i].size() > 1) entries[i].result = probes::SumResults(members[i]);
  }
  return entries;
}

}  // namespace iowatch::daemon
