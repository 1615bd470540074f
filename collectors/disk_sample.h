// DiskSample: one reading of /proc/diskstats together with /proc/uptime, the
// clock sysstat uses for intervals. Reading both in one place keeps every
// consumer (CLI, daemon) on the same elapsed-time definition.
// Thread-safety: ReadDiskSample is safe from any thread.
#pragma once

#include <cstdint>

#include "collectors/diskstats.h"
#include "common/file_tree.h"

namespace iowatch::collectors {

struct DiskSample {
  uint64_t uptime_cs = 0;  // /proc/uptime, centiseconds; 0 for the "since boot" origin
  Diskstats diskstats;

  const DiskStat* Find(std::string_view name) const;
};

// Fails when either file cannot be read or uptime is malformed; malformed
// diskstats lines are skipped and listed in diskstats.skipped.
Result<DiskSample> ReadDiskSample(const FileTree& procfs);

}  // namespace iowatch::collectors
