// Who did the I/O on a disk: the cgroups whose I/O on it peaked highest over
// the sampling window, for the probes' contention line ("others did 1,200
// IOPS … on vda (in the last 60 s: postgresql.service up to 96.0 MB/s)").
// Only the deepest cgroups are named (a slice counts its services: naming
// both would name the same I/O twice), and never iowatch's own cgroup, whose
// I/O is the probe's.
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "daemon/sampling/snapshot.h"

namespace iowatch::daemon {

// "" when the snapshot has no cgroup I/O on the disk major:minor.
std::string NameForeignLoad(const Snapshot& snapshot, uint32_t major, uint32_t minor,
                            std::string_view own_cgroup, size_t top = 3);

}  // namespace iowatch::daemon
