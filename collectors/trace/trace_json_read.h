// Reads back what the trace library wrote (process_trace.h): JSON Lines, one
// ProcessTrace per line. Errors name the file and the line and say what was
// expected ("trace.json:3: expected an object with \"iowatch_trace\": 1").
// Empty lines are skipped; a line that does not parse (a process killed
// while it wrote it) is an error naming it, and the other lines are kept.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collectors/trace/process_trace.h"
#include "common/result.h"

namespace iowatch::collectors::trace {

struct TraceLines {
  std::vector<ProcessTrace> processes;
  std::vector<Error> bad_lines;  // lines that did not parse, each with its number
};

// Every line that parses; the others as errors (`path` names the file in them).
TraceLines ParseTraceJsonLines(std::string_view text, const std::string& path);

}  // namespace iowatch::collectors::trace
