// CgroupSource: per-cgroup block I/O, once per sample. Detects which
// hierarchy counts I/O (again after a failure: cgroupfs mounted late), scans
// it (collectors/cgroup/cgroup_io.h) for the devices the iostat series
// report, and derives each cgroup x device pair's rates over the interval
// with their window maxima, as the iostat series have them, so "which unit
// did the burst at 03:12" is answered by one scrape. A pair whose counters
// went backwards (the cgroup was removed and re-created under its name)
// starts again with no rates. Reports the collector "cgroup".
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& CgroupSourceDescriptor();

// The families it renders (cgroup_families.cc).
void AddCgroupFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
