// The daemon's own resource use, read from /proc/self at scrape time, for the
// standard process_* metrics every Prometheus client exports (so existing
// dashboards and alerts on process_resident_memory_bytes etc. just work).
// Thread-safety: pure functions of the files they read.
#pragma once

#include <cstdint>

#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::daemon {

struct ProcessStats {
  double cpu_seconds = 0;  // utime + stime
  uint64_t resident_bytes = 0;
  uint64_t virtual_bytes = 0;
  uint64_t open_fds = 0;
  uint64_t max_fds = 0;  // soft RLIMIT_NOFILE
};

// `procfs` is the real /proc (not the sources' injected root: iowatch
// reports on itself, not on a fixture).
Result<ProcessStats> ReadProcessStats(const FileTree& procfs);

// When the process started, seconds since the epoch: /proc/stat's btime plus
// /proc/self/stat's starttime. It never changes, so it is read once, not per
// scrape (reading /proc/stat for btime costs more than the rest together).
Result<double> ReadProcessStartTime(const FileTree& procfs);

}  // namespace iowatch::daemon
