// `iowatch baseline show`'s second table: what else each run's disk and host
// did while it measured (probes::RunConditions), so an operator sees why a
// run was slow — "others did 1,200 IOPS on this disk" — next to its figures.
// Thread-safety: pure function.
#pragma once

#include <map>
#include <set>
#include <span>
#include <string>

#include "probes/store/store.h"
#include "probes/verdicts/run_class.h"
#include "probes/verdicts/run_record.h"

namespace iowatch::daemon {

// One line per run, in the order given: its id, then the foreign IOPS and
// MiB/s on the whole disk, others' share of the disk's work, the disk's
// %util, I/O pressure (some), the probe's wait for a CPU, CPU steal, "yes"
// when another probe measured meanwhile, the run's class under `policy`
// (clean, band N, cpu) and whether it was judged: as the daemon stored it
// (`stored`, by run id: "yes", or "no: " and why), else, for a run stored
// before the daemon kept its verdicts, "yes" when its band has a baseline
// (`bands`: the bands of the series that have one) and why not otherwise;
// "unknown" for a run whose conditions were not measured (stored before
// iowatch measured them), never judged. "" when no run has any.
std::string FormatRunConditions(std::span<const probes::RunRecord> runs,
                                const probes::ContentionPolicy& policy, const std::set<int>& bands,
                                const std::map<int64_t, probes::StoredRunVerdict>& stored = {});

}  // namespace iowatch::daemon
