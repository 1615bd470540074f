// `iowatch trace --what-if`: the traced files, merged across the traced
// processes, turned into the probe layer's what-if input (probes/what_if)
// and replayed one file at a time, each in a scratch directory made for it
// (beside the file, or under --scratch-dir; scratch_directory.h) and removed
// after. Block devices, files without transfers and files over
// --what-if-max-size are skipped, with the reason.
// The replays start cold (pages dropped); the traced run may not have: its
// own read time is kept beside the cold replay's of the same reads, and a
// traced run that read in under half that time was served from the page
// cache, which the report says, lest the ratio of two cold replays be read as
// the program's own speed-up.
// Thread-safety: main thread only (runs probes).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "cli/trace/trace_options.h"
#include "probes/what_if/what_if.h"
#include "trace/process_trace.h"

namespace iowatch::daemon {

struct WhatIfOutcome {
  std::string path;
  uint64_t size = 0;
  uint64_t probe_size = 0;
  std::string skipped;  // why it was not replayed; empty when it was
  std::vector<probes::WhatIfStep> steps;
  probes::WhatIfTotals totals;
  double traced_read_seconds = 0;     // in the traced calls; 0 when not timed (--no-times)
  double as_traced_read_seconds = 0;  // the read steps' cold replays as traced
  bool page_cache = false;            // ServedFromPageCache
};

// The traced reads took under half the time of their cold replay as traced.
bool ServedFromPageCache(const WhatIfOutcome& outcome);

// One entry per path, the processes' traces of it merged (MergeInto).
std::vector<trace::TracedFile> FilesAcrossProcesses(
    const std::vector<trace::ProcessTrace>& processes);

// The file's accesses as the what-if replays them, in the order first used.
probes::WhatIfFile WhatIfInput(const trace::TracedFile& file);

probes::WhatIfSettings WhatIfSettingsOf(const TraceOptions& options);

std::vector<WhatIfOutcome> RunWhatIfs(const std::vector<trace::TracedFile>& files,
                                      const TraceOptions& options, const std::atomic<bool>* cancel);

}  // namespace iowatch::daemon
