// How the clones of a job set become the entries `iowatch probe` prints:
// fio's rule (stat.c, __show_run_stats) — a clone joins the entry before it
// when both have group_reporting and the same group; otherwise it is an entry
// of its own. Entries summed with probes::SumResults.
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <vector>

#include "cli/probe/probe_format.h"
#include "probes/pipeline/run_job_set.h"

namespace iowatch::daemon {

std::vector<ProbeReportEntry> MakeReportEntries(const probes::JobSet& set,
                                                std::span<const probes::CloneOutcome> clones);

}  // namespace iowatch::daemon
