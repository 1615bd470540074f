// One smartctl run that nobody waits for: Start spawns it with its standard
// output on a non-blocking pipe (standard error discarded), Poll takes what
// it wrote so far and, once it has exited, its output and exit status. A
// disk that takes 30 s to answer a SMART command (or forever) holds its run,
// never the caller; Kill ends a run that overstayed (a smartctl stuck in the
// kernel ends when its ioctl returns, and is reaped then or at destruction).
// Thread-safety: one owner.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace iowatch::collectors {

class SmartctlRun {
 public:
  struct Finished {
    std::string output;  // standard output, at most kMaxOutputBytes
    int exit_code = 0;   // -1 when killed by a signal
  };
  static constexpr size_t kMaxOutputBytes = 4 << 20;

  // argv[0] is looked up in PATH; the error names it and errno (ENOENT: not installed).
  static Result<std::unique_ptr<SmartctlRun>> Start(const std::vector<std::string>& argv);
  ~SmartctlRun();
  SmartctlRun(const SmartctlRun&) = delete;
  SmartctlRun& operator=(const SmartctlRun&) = delete;

  // None while it runs.
  std::optional<Finished> Poll();
  void Kill();

 private:
  SmartctlRun(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  void Drain();

  pid_t pid_;
  int fd_;
  bool reaped_ = false;
  std::string output_;
};

}  // namespace iowatch::collectors
