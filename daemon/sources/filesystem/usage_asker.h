// UsageAsker: statvfs of mount points, each call bounded by a deadline. A
// mount that does not answer in time (a stale NFS server, a FUSE daemon that
// hangs) is stuck: its call keeps the thread it runs on, and the mount is not
// asked again until that call returns (node_exporter's mount-timeout rule,
// after its issue #244). The other mounts are asked on a fresh thread, so a
// stuck mount costs one thread, never one per sample, and at most
// kMaxStuck are kept: past that, no mount is asked until one returns. (The
// serve reader makes the call in a helper process, collectors/filesystem/
// statfs_helpers.h: the thread then waits on a socket, which exit ends.)
// Thread-safety: not thread-safe; one owner (the filesystem source's job).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "collectors/filesystem/filesystem_usage.h"
#include "common/result.h"
#include "daemon/sampling/bounded_worker.h"

namespace iowatch::daemon {

class UsageAsker {
 public:
  static constexpr size_t kMaxStuck = 8;

  struct Answer {
    // The usage, or why there is none: statvfs's error, "did not answer
    // within ...", or "still stuck since an earlier sample".
    Result<collectors::FilesystemUsage> usage;
    bool stuck = false;  // no answer yet: asked earlier, or now, in vain
  };

  UsageAsker();
  // Stuck calls are left to their threads (detached); they end with the call.
  ~UsageAsker();
  UsageAsker(const UsageAsker&) = delete;
  UsageAsker& operator=(const UsageAsker&) = delete;

  // Asks `read`(path), waiting until `deadline` at the latest.
  Answer Ask(const collectors::FilesystemUsageReader& read, const std::string& path,
             std::chrono::steady_clock::time_point deadline);

  size_t Stuck() const { return stuck_.size(); }

 private:
  // Forgets the stuck calls that have returned since.
  void Reap();

  std::unique_ptr<BoundedWorker> worker_;
  std::map<std::string, std::unique_ptr<BoundedWorker>, std::less<>> stuck_;  // by mount point
};

}  // namespace iowatch::daemon
