// What `iowatch trace` prints: each process's report (the library's own
// text, trace/process_trace.h), a line per process that wrote
// none, and the what-if table, or one JSON document {"command",
// "exit_status", "processes": [the library's lines], "unreported": [{"pid",
// "parent_pid", "program", "why"}], "what_if": {"settings", "files": [...]}}.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "cli/trace/trace_what_if.h"
#include "trace/process_trace.h"
#include "trace/trace_json_read.h"

namespace iowatch::daemon {

struct TraceRun {
  std::vector<std::string> command;
  int exit_status = 0;
  std::vector<trace::ProcessTrace> processes;     // by pid
  std::vector<trace::StartedProcess> unreported;  // started, no report
  bool what_if = false;
  probes::WhatIfSettings what_if_settings;
  std::vector<WhatIfOutcome> what_if_files;
};

std::string TraceText(const TraceRun& run);
std::string TraceJson(const TraceRun& run);

}  // namespace iowatch::daemon
