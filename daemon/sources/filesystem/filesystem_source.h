// The filesystem source: each sample, the mount table (<procfs>/self/mountinfo),
// one mount per filesystem the filters keep (collectors/filesystem/
// filesystem_mounts.h), and each one's statvfs through a UsageAsker, so a
// mount that hangs is marked (device_error) and skipped until it answers,
// never a delay of the sample. Reports the collector "filesystem": it fails
// when mountinfo cannot be read; a mount whose statvfs fails is its own
// device_error, not the collector's. Read-only is the superblock's state
// (mountinfo's super options): the per-mount flag would say every mount of a
// service under ProtectSystem=strict is read-only.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& FilesystemSourceDescriptor();

// The families it renders (filesystem_families.cc).
void AddFilesystemFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
