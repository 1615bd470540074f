// VmSource: /proc/stat, /proc/meminfo and /proc/vmstat each sample, into the
// snapshot's raw tables and the vmstat series (rates over the interval
// /proc/uptime measures, as for the disks) with their window maxima. One
// collector per file ("stat", "meminfo", "vmstat"), so an alert can say
// which file broke and the log why.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& VmSourceDescriptor();

// The families it renders (vm_families.cc).
void AddVmFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
