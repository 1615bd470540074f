// `iowatch baseline show`'s second table: what else each run's disk and host
// did while it measured (probes::RunConditions), so an operator sees why a
// run was slow — "others did 1,200 IOPS on this disk" — next to its figures.
// Thread-safety: pure function.
#pragma once

#include <span>
#include <string>

#include "probes/baseline/run_record.h"

namespace iowatch::daemon {

// One line per run, in the order given: its id, then the foreign IOPS and
// MiB/s on the whole disk, others' share of the disk's request time, the
// disk's %util, I/O pressure (some), CPU steal, and "yes" when another probe
// measured meanwhile; "unknown" for a run whose conditions were not measured
// (stored before iowatch measured them). "" when no run has any.
std::string FormatRunConditions(std::span<const probes::RunRecord> runs);

}  // namespace iowatch::daemon
