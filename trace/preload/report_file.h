// Where the trace library writes, and how: only to the files the environment
// names (IOWATCH_TRACE_OUTPUT, IOWATCH_TRACE_REPORT), never to standard
// error or any other descriptor of the program's, which may be a data file it
// reopened as 2 or a pipe nobody reads (a write there corrupts or blocks it).
// A program that
// ends holding every descriptor its limit allows leaves none to open the
// report with: ReportFile keeps a regular file open from the start, at a
// high number, and writes there when the path cannot be opened at exit. A
// report that still cannot be written (that descriptor closed or replaced
// by the program, the path out of reach after a chroot or in another mount
// namespace) is lost; `iowatch trace` says which process wrote none (the
// start lines below).
// AppendToFile opens the file with O_APPEND|O_CREAT|O_NONBLOCK|O_NOCTTY|
// O_CLOEXEC — a FIFO without a reader fails at once instead of holding the
// program's exit — and writes with SIGPIPE blocked in the calling
// thread: a reader that went away makes the write fail with EPIPE, and the
// SIGPIPE it raised is taken back before the mask is restored, so the
// program's exit status stays its own. A pipe that does not drain is given
// kDrainMilliseconds in all. System calls only (no allocation, no stdio):
// it runs in a forked child's atfork handler, which a signal handler may
// have reached.
// Thread-safety: reentrant.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string_view>

namespace iowatch::trace {

inline constexpr int kDrainMilliseconds = 2000;

// Appends `text` to `path`; false when it could not be written whole.
bool AppendToFile(const char* path, std::string_view text);

// A report's file: its path, and the descriptor kept for when the path
// cannot be opened. The descriptor is used only while it still is the file
// Reserve opened (same device and inode, opened for appending): a program
// that closed it and put something else on its number never gets our text.
// It is close-on-exec (an exec'd program's library keeps its own) and
// shared with forked children, which append through it as their parent.
// Thread-safety: Reserve once, before the program's main; Append from any
// thread.
class ReportFile {
 public:
  // Opens `path` (kept: it must outlive this) when it is a regular file or
  // does not exist yet (made then) and moves the descriptor to the highest
  // number free below `below` (the lowest limit it may be used under); a
  // FIFO or a terminal is not opened before the end.
  void Reserve(const char* path, int below);
  // AppendToFile(path), or when the path cannot be opened, the kept
  // descriptor if it is still ours.
  bool Append(std::string_view text) const;
  int descriptor() const { return fd_; }

 private:
  bool StillOurs() const;

  const char* path_ = nullptr;
  int fd_ = -1;
  dev_t device_ = 0;
  ino_t inode_ = 0;
};

// The number Reserve's descriptors go below: the soft RLIMIT_NOFILE, at most
// 1024 (a higher number makes the kernel grow the process's descriptor
// table to it).
int ReserveCeiling();

// {"iowatch_trace_start":1,"pid":P,"parent_pid":Q,"program":PROGRAM}\n at
// `out` (PROGRAM: a JSON string literal, quotes included), its length; `out`
// holds program_json.size() + 96 bytes. A process writes it when it starts
// (the library's constructor, a fork) and `iowatch trace` pairs it with the
// report the process writes at exit.
size_t FormatStartLine(int64_t pid, int64_t parent_pid, std::string_view program_json, char* out);

}  // namespace iowatch::trace
