// One traced process's report: which program, how long it ran, and a
// FileTrace per file it opened (regular files and block devices; other
// descriptors are not traced). Written by the LD_PRELOAD library at the
// process's exit, as text in the spirit of MIO's trace module and as one line
// of JSON (JSON Lines: each process of a traced tree appends its own line to
// IOWATCH_TRACE_OUTPUT); `iowatch trace` reads the lines back.
//   FormatTraceText  the human report, per file:
//     Trace close : program <-> os : /data/f : (30720000/0.0412)=745631.07 kB/s
//     call counts, seconds, requested and moved bytes, smallest and largest
//     request; the seek delta; the access pattern; the request-size histogram
//   TraceJsonLine    the same facts, one line, "\n"-terminated
//   ParseTraceJsonLines (trace_json_read.h) reads them back
// Formatting uses snprintf only: the library runs inside other programs and
// brings no dependency of iowatch's with it.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/file_trace.h"

namespace iowatch::trace {

inline constexpr int kTraceFormatVersion = 1;
// The files of one process traced apart; the ones beyond are summed into one
// entry named kOtherFiles, so that a program opening millions of files is
// traced in bounded memory.
inline constexpr size_t kMaxTracedFiles = 4096;
inline constexpr char kOtherFiles[] = "(other files)";

struct TracedFile {
  std::string path;  // absolute, as /proc/self/fd resolved it at open
  FileTrace trace;
  bool operator==(const TracedFile&) const = default;
};

struct ProcessTrace {
  int64_t pid = 0;
  int64_t parent_pid = 0;
  std::string program;            // /proc/self/exe
  double seconds = 0;             // from the library's start in the process to its exit
  std::string clock;              // how calls were timed: "tsc", "monotonic" or "none"
  std::vector<TracedFile> files;  // by path
  bool operator==(const ProcessTrace&) const = default;
};

// "RDWR|CREAT|TRUNC" for open(2) flags.
std::string OpenFlagsText(uint32_t flags);

std::string FormatTraceText(const ProcessTrace& process);
std::string TraceJsonLine(const ProcessTrace& process);

}  // namespace iowatch::trace
