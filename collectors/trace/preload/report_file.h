// Where the trace library writes, and how: only to the files the environment
// names (IOWATCH_TRACE_OUTPUT, IOWATCH_TRACE_REPORT), never to standard
// error or any other descriptor of the program's, which may be a data file it
// reopened as 2 or a pipe nobody reads (issue 26 item 11). A report that
// cannot be written (no descriptor left, the path out of reach after a chroot
// or in another mount namespace) is lost; `iowatch trace` says which process
// wrote none (the start lines below).
// AppendToFile opens the file with O_APPEND|O_CREAT|O_NONBLOCK|O_NOCTTY|
// O_CLOEXEC — a FIFO without a reader fails at once instead of holding the
// program's exit (item 23) — and writes with SIGPIPE blocked in the calling
// thread: a reader that went away makes the write fail with EPIPE, and the
// SIGPIPE it raised is taken back before the mask is restored, so the
// program's exit status stays its own. A pipe that does not drain is given
// kDrainMilliseconds in all. System calls only (no allocation, no stdio):
// it runs in a forked child's atfork handler, which a signal handler may
// have reached.
// Thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <string_view>

namespace iowatch::collectors::trace {

inline constexpr int kDrainMilliseconds = 2000;

// Appends `text` to `path`; false when it could not be written whole.
bool AppendToFile(const char* path, std::string_view text);

// {"iowatch_trace_start":1,"pid":P,"parent_pid":Q,"program":PROGRAM}\n at
// `out` (PROGRAM: a JSON string literal, quotes included), its length; `out`
// holds program_json.size() + 96 bytes. A process writes it when it starts
// (the library's constructor, a fork) and `iowatch trace` pairs it with the
// report the process writes at exit.
size_t FormatStartLine(int64_t pid, int64_t parent_pid, std::string_view program_json, char* out);

}  // namespace iowatch::collectors::trace
