// The status page's "Thin pools" table: each LVM thin pool's mode, data and
// metadata used of their size, and its flags, from the host's health
// (daemon/sampling/thin_pool_health.h): a mode other than rw, a needs_check
// and 80 % or more of either space marked.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "daemon/sampling/snapshot_health.h"

namespace iowatch::daemon {

// The section's HTML; empty on a host without thin pools.
std::string ThinPoolSection(const HostHealth& health);

}  // namespace iowatch::daemon
