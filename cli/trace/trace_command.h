// `iowatch trace [OPTION]... [--] COMMAND [ARG]...`: runs the command under
// libiowatch-trace.so (traced_child.h), reads the JSON lines its processes
// wrote (trace/trace_json_read.h), optionally replays the files
// (trace_what_if.h) and writes the report (trace_output.h) to standard error
// or --output. Exit status: the command's; 2 on a usage error, when the
// command could not be run, or when the report could not be written.
#pragma once

#include <string>
#include <vector>

namespace iowatch::daemon {

int RunTrace(const std::vector<std::string>& args);

}  // namespace iowatch::daemon
