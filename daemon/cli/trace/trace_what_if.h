// `iowatch trace --what-if`: the traced files, merged across the traced
// processes, turned into the probe layer's what-if input (probes/what_if)
// and replayed one file at a time, each in a scratch directory made for it
// (beside the file, or under --scratch-dir) and removed after. Block devices,
// files without transfers and files over --what-if-max-size are skipped,
// with the reason.
// Thread-safety: main thread only (runs probes).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "collectors/trace/process_trace.h"
#include "daemon/cli/trace/trace_options.h"
#include "probes/what_if/what_if.h"

namespace iowatch::daemon {

struct WhatIfOutcome {
  std::string path;
  uint64_t size = 0;
  uint64_t probe_size = 0;
  std::string skipped;  // why it was not replayed; empty when it was
  std::vector<probes::WhatIfStep> steps;
  probes::WhatIfTotals totals;
};

// One entry per path, the processes' traces of it merged (MergeInto).
std::vector<collectors::trace::TracedFile> FilesAcrossProcesses(
    const std::vector<collectors::trace::ProcessTrace>& processes);

// The file's accesses as the what-if replays them, in the order first used.
probes::WhatIfFile WhatIfInput(const collectors::trace::TracedFile& file);

probes::WhatIfSettings WhatIfSettingsOf(const TraceOptions& options);

std::vector<WhatIfOutcome> RunWhatIfs(const std::vector<collectors::trace::TracedFile>& files,
                                      const TraceOptions& options, const std::atomic<bool>* cancel);

}  // namespace iowatch::daemon
