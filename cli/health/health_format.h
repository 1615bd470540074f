// `iowatch health`'s outputs of a host's disk health
// (daemon/sampling/snapshot_health.h): a screen per host, names passed
// through TerminalText, and JSON.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "daemon/sampling/snapshot_health.h"

namespace iowatch::daemon {

std::string FormatHealthText(const HostHealth& health);
std::string FormatHealthJson(const HostHealth& health);

}  // namespace iowatch::daemon
