// StatfsHelpers: statfs(2) of mount points, run in helper processes. A FUSE
// server that never answers leaves the caller in an uninterruptible wait
// inside the kernel (the request is in the server's hands: not even SIGKILL
// ends it). Run on a thread of iowatch, that call would keep the whole
// process from exiting: `iowatch serve` would linger, its port bound, and a
// restart would fail until the server answers. Here the call is made by a
// helper, a fork() that only reads mount points from a socket, calls statfs
// and writes the answer back; the asking thread waits on the socket, which
// exit and signals interrupt. A sample's mounts go to one helper in one
// message, and it answers each as its call returns: one round trip a sample,
// not one a mount (each costs a wake-up of this process and of the helper,
// tens of microseconds on a virtual machine). Idle helpers are reused; one
// whose call has not returned stays with it and exits once the call returns
// and finds iowatch gone or done with it.
// Thread-safety: Read may be called from any thread, concurrently.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <span>
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

  // The paths' usage (UsageOfStatfs), answered in their order as each call
  // returns; blocks until the last answer, or until the message after the
  // answer that returned false (the caller bounds it: UsageAsker).
  // A helper takes as many paths as one message of kBatchBytes holds.
  void ReadAll(std::span<const std::string> paths, const FilesystemUsageAnswer& answer);
  // One path's: ReadAll of it alone.
  Result<FilesystemUsage> Read(const std::string& path);

  static constexpr size_t kBatchBytes = size_t{64} * 1024;

  size_t Spawned() const;  // helpers started so far

 private:
  struct Helper {
    pid_t pid = -1;
    int socket = -1;
  };
  Result<Helper> TakeIdle();
  // One message of paths (`indices` into `paths`, each ended by a NUL) to a
  // helper, and its answers; false once the caller wants no more.
  bool AskHelper(const std::string& message, std::span<const size_t> indices,
                 std::span<const std::string> paths, const FilesystemUsageAnswer& answer);
  void GiveBack(Helper helper);
  // Closes a helper's socket (an idle one exits on it) and reaps the helpers
  // that have exited since.
  void Retire(Helper helper);

  mutable std::mutex mutex_;
  std::vector<Helper> idle_;    // guarded by mutex_
  std::vector<pid_t> retired_;  // exited or exiting, not yet reaped; guarded by mutex_
  size_t spawned_ = 0;          // guarded by mutex_
};

// A batch reader asking `helpers` (the filesystem source's default).
FilesystemUsageBatchReader HelperUsageReader(std::shared_ptr<StatfsHelpers> helpers);

}  // namespace iowatch::collectors
