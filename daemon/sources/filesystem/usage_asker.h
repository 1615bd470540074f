// UsageAsker: statvfs of mount points, in batches, each call bounded by a
// deadline. A sample's mounts go to one job on one thread, which asks them
// in turn and answers each as its call returns (one handoff a sample, not
// one a mount). A mount that does not answer in time (a stale NFS server, a
// FUSE daemon that hangs) is stuck: its call keeps the thread it runs on,
// the mounts after it in its batch are asked in another batch on a fresh
// thread, and the stuck mount is not asked again until its call returns
// (node_exporter's mount-timeout rule, after
// https://github.com/prometheus/node_exporter/issues/244). So a stuck mount
// costs one thread, never one per sample, and at most kMaxStuck are kept per
// pool: past that, no mount of that pool is asked until one returns. A pool
// is a kind of filesystem (PoolOf: FUSE is one, whatever its subtype), so
// that mounts any user can make hang (FUSE through fusermount3) never starve
// the others of their turn. (The serve reader makes the calls in a helper
// process, collectors/filesystem/statfs_helpers.h: the thread then waits on
// a socket, which exit ends.)
// Thread-safety: not thread-safe; one owner (the filesystem source's job).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/filesystem/filesystem_usage.h"
#include "common/result.h"
#include "daemon/sampling/bounded_worker.h"

namespace iowatch::daemon {

class UsageAsker {
 public:
  static constexpr size_t kMaxStuck = 8;
  using Clock = std::chrono::steady_clock;

  // Views of the caller's strings, for the call (36,000 mounts are 36,000
  // copies a sample otherwise).
  struct Request {
    std::string_view path;  // the mount point
    std::string_view pool;  // PoolOf(its type)
  };

  struct Answer {
    // The usage, or why there is none: statvfs's error, "did not answer
    // within ...", or "still stuck since an earlier sample".
    Result<collectors::FilesystemUsage> usage;
    bool stuck = false;  // no answer, and the call has run past its timeout
    // No answer yet, within its timeout: the deadline came first, or the
    // call is still running from an earlier sample whose deadline did.
    bool pending = false;
    // False when the deadline came before the mount's turn: not asked (its
    // usage is then the error "not asked", without its path).
    bool reached = true;
  };

  UsageAsker();
  // Stuck calls are left to their threads (detached); they end with the call.
  ~UsageAsker();
  UsageAsker(const UsageAsker&) = delete;
  UsageAsker& operator=(const UsageAsker&) = delete;

  // The pool of a filesystem type: the type up to its first dot ("fuse"
  // for "fuse.sshfs": the subtype is the mounting user's choice); a view of `fstype`.
  static std::string_view PoolOf(std::string_view fstype);

  // Asks each request through `read`, in order, waiting until `deadline` at
  // the latest (an answer for each request, in the same order). A request
  // whose earlier call has not returned, or whose pool has kMaxStuck stuck
  // calls, is answered without a call. A call that has not returned
  // `timeout` after it began is stuck.
  std::vector<Answer> AskAll(const collectors::FilesystemUsageBatchReader& read,
                             std::span<const Request> requests, Clock::duration timeout,
                             Clock::time_point deadline);

  // Calls running past their timeout.
  size_t Stuck() const;

 private:
  struct StuckCall {
    std::string pool;
    Clock::time_point stuck_after;
    std::unique_ptr<BoundedWorker> worker;  // its thread, in the call
  };
  struct Batch;

  // Forgets the stuck calls that have returned since.
  void Reap();
  size_t StuckIn(std::string_view pool) const;
  // The answer of a request that is not called (its earlier call has not
  // returned, or its pool is full); nullopt when it may be called.
  std::optional<Answer> Uncalled(const Request& request) const;
  // Runs `indices` (into `requests`) as one job until each has answered or a
  // call ran out of time; fills their answers. Returns the index of the
  // request whose call ran out of time (stuck or pending), or nullopt.
  std::optional<size_t> RunBatch(const collectors::FilesystemUsageBatchReader& read,
                                 std::span<const Request> requests,
                                 const std::vector<size_t>& indices, Clock::duration timeout,
                                 Clock::time_point deadline, std::vector<Answer>& answers);

  std::unique_ptr<BoundedWorker> worker_;
  // Calls that have not returned, stuck or pending, by mount point.
  std::map<std::string, StuckCall, std::less<>> stuck_;
};

}  // namespace iowatch::daemon
