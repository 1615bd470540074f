// A filesystem's space and inodes, as statvfs(3) reports them and df(1)
// prints them: sizes are block counts times f_frsize, the unit POSIX gives
// f_blocks, f_bfree and f_bavail in (on Linux the same as node_exporter's
// f_bsize for every filesystem the kernel ships but a few network ones).
// Thread-safety: pure data; ReadFilesystemUsage may block (a stale NFS
// mount, a hung FUSE daemon): call it where a deadline guards it.
#pragma once

#include <cstdint>
#include <functional>
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

// statvfs(path); the error names the path and errno.
Result<FilesystemUsage> ReadFilesystemUsage(const std::string& path);

}  // namespace iowatch::collectors
