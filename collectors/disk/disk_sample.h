// DiskSample: one reading of /proc/diskstats together with /proc/uptime, the
// clock sysstat uses for intervals. Reading both in one place keeps every
// consumer (CLI, daemon) on the same elapsed-time definition.
// Thread-safety: ReadDiskSample is safe from any thread.
#pragma once

#include <cstdint>
#include <optional>

#include "collectors/disk/diskstats.h"
#include "common/file_tree.h"

namespace iowatch::collectors {

struct DiskSample {
  uint64_t uptime_cs = 0;  // /proc/uptime, centiseconds; 0 for the "since boot" origin
  Diskstats diskstats;
  // Why uptime could not be read, with UptimeNeed::kOptional (uptime_cs is
  // then 0 and no interval can be measured from this sample).
  std::optional<Error> uptime_error;

  const DiskStat* Find(std::string_view name) const;
};

// iostat's report is nothing without an interval: it needs uptime. The
// daemon's raw counters need no clock: only its rates do.
enum class UptimeNeed { kRequired, kOptional };

// Fails when diskstats cannot be read, or uptime when it is required, or is
// malformed; malformed diskstats lines are skipped and listed in
// diskstats.skipped.
Result<DiskSample> ReadDiskSample(const FileTree& procfs,
                                  UptimeNeed uptime_need = UptimeNeed::kRequired);

}  // namespace iowatch::collectors
