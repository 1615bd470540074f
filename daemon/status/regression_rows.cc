#include "daemon/status/regression_rows.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/markup.h"
#include "daemon/sampling/foreign_load.h"
#include "probes/verdicts/regression_facts.h"

namespace iowatch::daemon {
namespace {

// What else the job's disk shows now: its problems other than the probes'
// regressions (I/O errors, filesystems, SMART attributes), its SMART state,
// and the busiest other cgroup on it.
std::string DiskNow(const ProbeJobSnapshot& job, const StatusPageInput& in,
                    const HostHealth& health) {
  const auto disk = std::ranges::find_if(health.disks, [&](const DiskHealth& d) {
    return std::ranges::find(d.probes, job.name, &ProbeSeriesVerdict::job) != d.probes.end();
  });
  if (disk == health.disks.end()) return "its disk is not among the reported devices";
  std::string problems;
  for (const std::string& p : disk->problems) {
    if (p.starts_with("probe ")) continue;  // the regressions themselves
    problems += (problems.empty() ? "" : "; ") + p;
  }
  std::string out = fmt::format("{} now: {} (SMART {})", disk->name,
                                problems.empty() ? "no error or filesystem problem" : problems,
                                disk->smart.state);
  const std::string others =
      NameForeignLoad(in.sample, job.target_major, job.target_minor, in.own_cgroup, 1);
  return out + "; " + (others.empty() ? "no other cgroup's I/O on it" : "others " + others);
}

}  // namespace

std::string RegressionRows(const ProbeJobSnapshot& job, const StatusPageInput& in,
                           const HostHealth& health) {
  std::string rows;
  for (const ProbeVerdict& v : job.verdicts) {
    if (!v.regressed) continue;
    rows += fmt::format(
        "<tr class=\"explain\"><td></td><td colspan=\"11\"><span class=\"bad\">{} {}</span> "
        "{}; {}</td></tr>\n",
        HtmlEscape(v.verdict.op), HtmlEscape(v.verdict.metric),
        HtmlEscape(probes::ExplainRegression(FactsOf(job, v))),
        HtmlEscape(DiskNow(job, in, health)));
  }
  return rows;
}

}  // namespace iowatch::daemon
