// The scsi source: each SCSI disk's command counters (collectors/
// scsi_counters.h: sent, completed, completed with an error, timed out),
// read every sample for the whole disks of the sample whose transport is
// SCSI (SATA and SAS disks behind libata or a SAS HBA, iSCSI, USB storage),
// each extended past the kernel's 32-bit wrap. Reports the collector
// "scsi": it fails, with the file, when a SCSI disk's counters cannot be
// read; a host without SCSI disks reports success and no series.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& ScsiSourceDescriptor();

// The families it renders (scsi_families.cc).
void AddScsiFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
