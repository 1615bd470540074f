// How CLI subcommands write: whole chunks to stdout, flushed at once (a report
// is never left half-printed in a pipe), and errors as one line
// "iowatch <command>: <file:line: message>" with exit status 2. A failed
// write to stdout (a full disk, a closed pipe with SIGPIPE ignored) is such an
// error: a report that did not reach its file must not exit 0.
// Thread-safety: main thread only.
#pragma once

#include <cerrno>
#include <cstdio>
#include <string>

#include "common/result.h"
#include "common/terminal_text.h"

namespace iowatch::daemon {

inline Status WriteStdout(const std::string& text) {
  const size_t written = std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0 || written != text.size()) {
    return ErrnoError(errno, "cannot write the report", "standard output");
  }
  return {};
}

inline int ReportError(const char* command, const Error& error) {
  // The path is a name the user or the system chose (a job file, a target):
  // escaped for the terminal. Messages quote what they show with {:?}.
  Error shown = error;
  shown.path = TerminalText(error.path);
  // Nothing is left to tell if stderr fails too: the exit status still says it.
  (void)std::fprintf(stderr, "iowatch %s: %s\n", command, shown.ToString().c_str());
  return 2;
}

}  // namespace iowatch::daemon
