// StatfsHelpers: statfs(2) of mount points, run in helper processes. A FUSE
// server that never answers leaves the caller in an uninterruptible wait
// inside the kernel (the request is in the server's hands: not even SIGKILL
// ends it). Run on a thread of iowatch, that call would keep the whole
// process from exiting: `iowatch serve` would linger, its port bound, and a
// restart would fail until the server answers. Here the call is made by a
// helper, a fork() that only reads mount points from a socket, calls statfs
// and writes the answer back; the asking thread waits on the socket, which
// exit and signals interrupt. Idle helpers are reused (a sample asks each
// mount in turn, so one helper serves them all); one whose call has not
// returned stays with it and exits once the call returns and finds iowatch
// gone or done with it.
// Thread-safety: Read may be called from any thread, concurrently.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collectors/filesystem/filesystem_usage.h"
#include "common/result.h"

namespace iowatch::collectors {

class StatfsHelpers {
 public:
  StatfsHelpers() = default;
  // Ends the idle helpers; a busy one is its caller's until its call returns.
  ~StatfsHelpers();
  StatfsHelpers(const StatfsHelpers&) = delete;
  StatfsHelpers& operator=(const StatfsHelpers&) = delete;

  // The mount point's usage (UsageOfStatfs); blocks until a helper answers
  // (the caller bounds it: UsageAsker).
  Result<FilesystemUsage> Read(const std::string& path);

  size_t Spawned() const;  // helpers started so far

 private:
  struct Helper {
    pid_t pid = -1;
    int socket = -1;
  };
  Result<Helper> TakeIdle();
  void GiveBack(Helper helper);
  // Closes a helper's socket (an idle one exits on it) and reaps the helpers
  // that have exited since.
  void Retire(Helper helper);

  mutable std::mutex mutex_;
  std::vector<Helper> idle_;    // guarded by mutex_
  std::vector<pid_t> retired_;  // exited or exiting, not yet reaped; guarded by mutex_
  size_t spawned_ = 0;          // guarded by mutex_
};

// A reader asking `helpers` (FilesystemSourceOptions' default).
FilesystemUsageReader HelperUsageReader(std::shared_ptr<StatfsHelpers> helpers);

}  // namespace iowatch::collectors
