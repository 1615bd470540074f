// The status page's storage stack tables, from the host's health
// (daemon/sampling/storage_stack_health.h), each with its problems first, as
// an SRE scans the page: "NVMe controllers" (state, model, firmware,
// namespaces; not live marked), "ZFS pools" (state; not ONLINE marked) and
// "Multipath maps" (running paths of all, each path's state; a path not
// running marked, a map down to one usable path marked).
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "daemon/sampling/snapshot_health.h"

namespace iowatch::daemon {

// The three sections' HTML; each empty on a host without such devices.
std::string StorageStackSections(const HostHealth& health);

}  // namespace iowatch::daemon
