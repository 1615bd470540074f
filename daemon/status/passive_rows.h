// The status page's "Passive judge" table: per disk, op and source, the last
// minute's requests and mean latency, the model's prediction, the ratio
// against its bound, and the state (regressed since when, learning, or why
// the last minute was not judged).
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "daemon/passive/passive_service.h"

namespace iowatch::daemon {

// The section's HTML; empty when no disk has a series yet.
std::string PassiveSection(const PassiveSnapshot& passive);

}  // namespace iowatch::daemon
