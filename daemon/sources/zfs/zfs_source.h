// ZfsSource: the ZFS pools, once per sample. Reads
// <procfs>/spl/kstat/zfs/<pool>/state and io (collectors/zfs/zfs_pool.h) and
// reports one collector, "zfs_pool". A kernel without the ZFS module has no
// /proc/spl: the collector succeeds with no pools and its status says what
// was absent, since nothing is wrong to page on. Any other read or parse
// failure fails it, with the file.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& ZfsSourceDescriptor();

// The families it renders (zfs_families.cc).
void AddZfsFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
