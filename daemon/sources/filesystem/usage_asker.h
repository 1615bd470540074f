// UsageAsker: statvfs of mount points, each call bounded by a deadline. A
// mount that does not answer in time (a stale NFS server, a FUSE daemon that
// hangs) is stuck: its call keeps the thread it runs on, and the mount is not
// asked again until that call returns (node_exporter's mount-timeout rule,
// after https://github.com/prometheus/node_exporter/issues/244). The other
// mounts are asked on a fresh thread, so a stuck mount costs one thread,
// never one per sample, and at most kMaxStuck are kept per pool: past that,
// no mount of that pool is asked until one returns. A pool is a kind of
// filesystem (PoolOf: FUSE is one, whatever its subtype), so that mounts any
// user can make hang (FUSE through fusermount3) never starve the others of
// their turn. (The serve reader makes the call in a helper process,
// collectors/filesystem/statfs_helpers.h: the thread then waits on a socket,
// which exit ends.)
// Thread-safety: not thread-safe; one owner (the filesystem source's job).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

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
    bool stuck = false;  // no answer, and the call has run past its time (stuck_after)
    // No answer yet, within its time: the deadline was the caller's (the
    // sample's end), or the call is still running from an earlier Ask that was.
    bool pending = false;
  };

  UsageAsker();
  // Stuck calls are left to their threads (detached); they end with the call.
  ~UsageAsker();
  UsageAsker(const UsageAsker&) = delete;
  UsageAsker& operator=(const UsageAsker&) = delete;

  // The pool of a filesystem type: the type up to its first dot ("fuse"
  // for "fuse.sshfs": the subtype is the mounting user's choice).
  static std::string PoolOf(std::string_view fstype);

  // Asks `read`(path), waiting until `deadline` at the latest; `pool` is
  // PoolOf(the mount's type). A call that has not returned by `stuck_after`
  // (the mount's own timeout; `deadline` when none) is stuck; before that it
  // is pending.
  Answer Ask(const collectors::FilesystemUsageReader& read, const std::string& path,
             std::string_view pool, std::chrono::steady_clock::time_point deadline,
             std::optional<std::chrono::steady_clock::time_point> stuck_after = std::nullopt);

  // Calls running past their time.
  size_t Stuck() const;

 private:
  struct StuckCall {
    std::string pool;
    std::chrono::steady_clock::time_point stuck_after;
    std::unique_ptr<BoundedWorker> worker;  // its thread, in the call
  };
  // Forgets the stuck calls that have returned since.
  void Reap();
  size_t StuckIn(std::string_view pool) const;

  std::unique_ptr<BoundedWorker> worker_;
  // Calls that have not returned, stuck or pending, by mount point.
  std::map<std::string, StuckCall, std::less<>> stuck_;
};

}  // namespace iowatch::daemon
