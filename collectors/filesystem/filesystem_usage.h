// A filesystem's space and inodes, as statvfs(3) reports them and df(1)
// prints them: sizes are block counts times f_frsize, the unit POSIX gives
// f_blocks, f_bfree and f_bavail in (on Linux the same as node_exporter's
// f_bsize for every filesystem the kernel ships but a few network ones).
// statfs(2) may block for good (a hung FUSE server): iowatch calls it in
// helper processes (statfs_helpers.h), under a deadline (UsageAsker).
// Thread-safety: pure data and functions.
#pragma once

#include <sys/statfs.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "common/result.h"

namespace iowatch::collectors {

struct FilesystemUsage {
  uint64_t size_bytes = 0;   // f_blocks
  uint64_t free_bytes = 0;   // f_bfree: root's too
  uint64_t avail_bytes = 0;  // f_bavail: what an unprivileged writer can still use
  uint64_t files = 0;        // f_files (inodes; 0 where the filesystem has no fixed count)
  uint64_t files_free = 0;   // f_ffree
  bool operator==(const FilesystemUsage&) const = default;
};

// Reads one mount point's usage (tests inject another).
using FilesystemUsageReader = std::function<Result<FilesystemUsage>(const std::string& path)>;

// One mount point of a batch answered: its index in the batch, and its usage.
// Returns whether the caller still wants the rest of the batch (false: its
// sample's time ran out).
using FilesystemUsageAnswer = std::function<bool(size_t index, Result<FilesystemUsage> usage)>;
// Reads a batch of mount points in their order, answering each as its call
// returns, so that a caller who stops waiting keeps every answer that came
// before a call that hangs; makes no new call once an answer returned false.
using FilesystemUsageBatchReader =
    std::function<void(std::span<const std::string> paths, const FilesystemUsageAnswer& answer)>;
// A batch read one mount point after another through `read`.
FilesystemUsageBatchReader OneByOne(FilesystemUsageReader read);

// What statvfs(3) makes of statfs(2)'s figures: f_frsize, else f_bsize, as
// the unit (glibc's statvfs does the same).
FilesystemUsage UsageOfStatfs(const struct statfs& s);

}  // namespace iowatch::collectors
