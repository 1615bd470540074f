// MdSource: the md RAID arrays, once per sample. Reads <procfs>/mdstat
// (collectors/md/mdstat.h) and <sysfs>/block/md*/md/ (collectors/md/md_sysfs.h)
// and reports two collectors, "mdstat" and "md_sysfs". A kernel without md
// has neither (no /proc/mdstat, no md arrays): both succeed with no arrays
// and their status says what was absent, since nothing is wrong to page on.
// Any other read or parse failure fails its collector, with the file.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& MdSourceDescriptor();

// The families it renders (md_families.cc).
void AddMdFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
