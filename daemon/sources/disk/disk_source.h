// DiskSource: /proc/diskstats each sample, sysfs when the devices change,
// into the snapshot's devices (raw counters, the iostat series against the
// previous sample, with the same functions as the CLI, and their window
// maxima) and block devices. Collectors "sysfs" and "diskstats".
//
// Sysfs is walked (~15 attribute files per device) only when the set of
// devices in /proc/diskstats or the filters change, never on every sample.
// The work that depends only on that set (filters, sysfs lookups, sorting by
// name) is done then too and kept as a plan: each sample just walks
// /proc/diskstats' lines into the per-device state slots the plan assigns.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& DiskSourceDescriptor();

// The families it renders (disk_families.cc).
void AddDiskFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
