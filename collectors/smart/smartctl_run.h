// One smartctl run that nobody waits for: Start spawns it in a process group
// of its own, with its standard output on a non-blocking pipe (standard error
// discarded); Poll takes what it wrote so far and, once it has exited, its
// output and exit status. A disk that takes 30 s to answer a SMART command
// (or forever) holds its run, never the caller. Kill ends a run that
// overstayed, its children with it (SIGKILL to the group), without waiting:
// a smartctl stuck in the kernel (an SG_IO or NVMe ioctl on a hung disk)
// dies only when its ioctl returns, so its owner keeps it and polls it until
// Poll reaps it (Poll on a killed run says when it is gone). Nothing here
// blocks.
// The capabilities SMART commands need (CAP_SYS_RAWIO, CAP_SYS_ADMIN) go to
// smartctl only: HoldSmartctlCapabilities keeps them out of the daemon's
// effective set, and Start hands them on as ambient capabilities to the
// child alone.
// Thread-safety: one owner.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace iowatch::collectors {

// When this process is not root and holds CAP_SYS_RAWIO or CAP_SYS_ADMIN
// (the unit's drop-in grants them as ambient capabilities), removes them
// from its effective and ambient sets and keeps them permitted and
// inheritable, for Start alone to pass on: the daemon (its HTTP server, its
// parsers) never acts with them. Capabilities are per thread: call it before
// any thread starts. Returns what it did, for the log ("" when nothing, or an
// error naming the call).
std::string HoldSmartctlCapabilities();

class SmartctlRun {
 public:
  struct Finished {
    std::string output;  // standard output, at most kMaxOutputBytes
    int exit_code = 0;   // -1 when killed by a signal
  };
  static constexpr size_t kMaxOutputBytes = 4 << 20;

  // argv[0] is looked up in PATH; the error names it and errno (ENOENT: not
  // installed). The child gets the capabilities HoldSmartctlCapabilities held.
  static Result<std::unique_ptr<SmartctlRun>> Start(const std::vector<std::string>& argv);
  // Kills the group of a run not yet reaped and reaps it if it is gone
  // already; one stuck in the kernel stays a zombie until the daemon exits.
  ~SmartctlRun();
  SmartctlRun(const SmartctlRun&) = delete;
  SmartctlRun& operator=(const SmartctlRun&) = delete;

  // None while it runs. Once it has exited, whatever its group left running
  // is killed and it is reaped: its output and exit status, once.
  std::optional<Finished> Poll();
  // SIGKILL to its process group; returns at once.
  void Kill();
  // It has exited and been reaped (by Poll).
  bool Reaped() const { return reaped_; }
  pid_t pid() const { return pid_; }

 private:
  SmartctlRun(pid_t pid, int fd) : pid_(pid), fd_(fd) {}
  void Drain();

  pid_t pid_;  // also its process group's id
  int fd_;
  bool reaped_ = false;
  std::string output_;
};

}  // namespace iowatch::collectors
