// The status page's "RAID arrays" table: each md array's level, state,
// degraded disks, failed members and running sync, from the host's health
// (daemon/sampling/md_health.h), its problems marked.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "daemon/sampling/snapshot_health.h"

namespace iowatch::daemon {

// The section's HTML; empty on a host without md arrays.
std::string MdSection(const HostHealth& health);

}  // namespace iowatch::daemon
