// `iowatch iotop`: the cgroups doing the most I/O, refreshed every interval
// (a terminal gets a redrawn screen of its height; a pipe gets each report
// in turn), from the same Sampler as `serve`, so the numbers are /metrics'.
#pragma once

#include <string>
#include <vector>

#include "cli/shared/global_options.h"

namespace iowatch::daemon {
int RunIotop(const GlobalOptions& global, const std::vector<std::string>& args);
}
