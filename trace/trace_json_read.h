// Reads back what the trace library wrote (process_trace.h): JSON Lines, one
// ProcessTrace per line, and, when `iowatch trace` asked for them
// (IOWATCH_TRACE_STARTS=1), a start line per process image
// {"iowatch_trace_start":1,"pid","parent_pid","program"}, so that a process
// whose report never came (killed, _exit(), or its report unwritable) can be
// named. Errors name the file and the line and say what was expected
// ("trace.json:3: expected an object with \"iowatch_trace\": 1"). Empty lines
// are skipped; a line that does not parse (a process killed while it wrote
// it, junk the program wrote there) is an error naming it, and the other
// lines are kept.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "trace/process_trace.h"

namespace iowatch::trace {

// Longer lines are refused unread: a process's line holds at most
// kMaxTracedFiles + 1 files, each ~1.3 KB of figures and its name: 16 MiB
// covers every file with a name of 2 KB on average (six bytes for each byte
// of it a JSON escape may take), and bounds what junk in the file can make
// `iowatch trace` hold.
inline constexpr size_t kMaxTraceLineBytes = 16 << 20;

struct StartedProcess {
  int64_t pid = 0;
  int64_t parent_pid = 0;
  std::string program;
  bool operator==(const StartedProcess&) const = default;
};

struct TraceLines {
  std::vector<ProcessTrace> processes;
  std::vector<StartedProcess> started;  // in the file's order
  std::vector<Error> bad_lines;         // lines that did not parse, each with its number
};

// Every line that parses; the others as errors (`path` names the file in them).
TraceLines ParseTraceJsonLines(std::string_view text, const std::string& path);

// The same from the file at `path`, read a line at a time (a regular file
// only: a FIFO put in its place is refused, not waited on); lines longer than
// kMaxTraceLineBytes are bad lines. Errors: the file cannot be read.
Result<TraceLines> ReadTraceJsonFile(const std::string& path);

// The started processes whose last image (a pid's latest start line: the
// ones before it exec'd) wrote no report.
std::vector<StartedProcess> Unreported(const TraceLines& lines);

}  // namespace iowatch::trace
