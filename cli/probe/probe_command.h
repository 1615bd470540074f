// `iowatch probe`: one fio-style job against a file or (when allowed) a block
// device, with a terminal progress line, SIGINT/SIGTERM stopping the run
// cleanly with partial results, and fio-compatible JSON or a human summary.
// Exit status: 0 completed, 1 the run failed or hit its time limit (results
// still printed), 2 bad options or an unusable target, 130 interrupted.
// Thread-safety: main thread only (installs signal handlers).
#pragma once

#include <string>
#include <vector>

#include "cli/shared/global_options.h"

namespace iowatch::daemon {

// `global.sysfs` is where a file's device's logical block size is read when
// statx cannot tell the direct-I/O alignment (--path.sysfs after the
// subcommand, one of `args`, wins).
int RunProbeCommand(const GlobalOptions& global, const std::vector<std::string>& args);

}  // namespace iowatch::daemon
