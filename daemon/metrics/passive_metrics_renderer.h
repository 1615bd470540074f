// The Prometheus view of the passive judge (daemon/passive/): per disk, op,
// size class and source, the last window's observed latency and requests,
// the last judged window's prediction, ratio and bound, the regression
// state, what the model learned from, and every window counted by what
// became of it. docs/metrics.md lists every family.
//
// Small (a dozen lines per disk): rendered whole at scrape time from the
// service's immutable PassiveSnapshot, after the probes' families.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "daemon/passive/passive_service.h"

namespace iowatch::daemon {

void RenderPassiveMetrics(const PassiveSnapshot& snapshot, std::string& out);

// Every family RenderPassiveMetrics can produce, in output order.
std::vector<std::string_view> PassiveMetricFamilyNames();

}  // namespace iowatch::daemon
