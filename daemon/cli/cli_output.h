// How CLI subcommands write: whole chunks to stdout, flushed at once (a report
// is never left half-printed in a pipe), and errors as one line
// "iowatch <command>: <file:line: message>" with exit status 2.
// Thread-safety: main thread only.
#pragma once

#include <cstdio>
#include <string>

#include "common/result.h"

namespace iowatch::daemon {

inline void WriteStdout(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

inline int ReportError(const char* command, const Error& error) {
  std::fprintf(stderr, "iowatch %s: %s\n", command, error.ToString().c_str());
  return 2;
}

}  // namespace iowatch::daemon
