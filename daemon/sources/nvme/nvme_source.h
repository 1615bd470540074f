// NvmeSource: the NVMe controllers, once per sample. Reads
// <sysfs>/class/nvme/*/ (collectors/nvme/nvme_class.h) and reports one
// collector, "nvme". A kernel without the nvme driver has no class/nvme: the
// collector succeeds with no controllers and its status says what was
// absent, since nothing is wrong to page on. Any other read or parse failure
// fails it, with the file.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& NvmeSourceDescriptor();

// The families it renders (nvme_families.cc).
void AddNvmeFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
