// Running the traced command: fork, exec with libiowatch-trace.so added to
// LD_PRELOAD, IOWATCH_TRACE_OUTPUT naming the file its processes append
// their JSON lines to and IOWATCH_TRACE_STARTS=1 (a line when each starts),
// and wait. SIGINT and SIGTERM are ignored by iowatch
// meanwhile (the command gets them from the terminal, as under time(1)), so
// that the report is still written when the command is interrupted.
// Thread-safety: main thread only (fork).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace iowatch::daemon {

// The library to preload: `given` if not empty, else libiowatch-trace.so
// beside the running binary, else in ../lib/iowatch/ from it. Absolute.
Result<std::string> FindTraceLibrary(const std::string& given);

// The command's exit status, or 128 + the signal that ended it. Errors: the
// fork failed, or the command could not be executed (its errno, from the
// child through a close-on-exec pipe).
Result<int> RunTracedCommand(const std::vector<std::string>& command, const std::string& library,
                             const std::string& json_path, bool time_calls);

}  // namespace iowatch::daemon
