// `iowatch biolatency`: the block layer's latency histograms per disk and
// op, from the same BPF program as /metrics' iowatch_block_* families,
// loaded for the command's lifetime (root, or CAP_BPF and CAP_PERFMON).
#pragma once

#include <string>
#include <vector>

#include "cli/shared/global_options.h"

namespace iowatch::daemon {
int RunBiolatency(const GlobalOptions& global, const std::vector<std::string>& args);
}
