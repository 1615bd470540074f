// What `iowatch trace` prints: each process's report (the library's own
// text, collectors/trace/process_trace.h) and the what-if table, or one JSON
// document {"command", "exit_status", "processes": [the library's lines],
// "what_if": {"settings", "files": [...]}}.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "collectors/trace/process_trace.h"
#include "daemon/cli/trace/trace_what_if.h"

namespace iowatch::daemon {

struct TraceRun {
  std::vector<std::string> command;
  int exit_status = 0;
  std::vector<collectors::trace::ProcessTrace> processes;  // by pid
  bool what_if = false;
  probes::WhatIfSettings what_if_settings;
  std::vector<WhatIfOutcome> what_if_files;
};

std::string TraceText(const TraceRun& run);
std::string TraceJson(const TraceRun& run);

}  // namespace iowatch::daemon
