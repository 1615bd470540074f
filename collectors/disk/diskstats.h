// Parser for /proc/diskstats and /sys/block/<dev>[/<part>]/stat.
//
// Field meanings from the kernel's Documentation/admin-guide/iostats.rst and
// Documentation/ABI/testing/procfs-diskstats. /proc/diskstats lines are
// "major minor name" followed by 14 (kernel < 4.18), 18 (4.18+, discards) or
// 20 (5.5+, flushes) numbers; sysfs stat files hold the same numbers without
// the first three columns (11, 15 or 17). Kernels before 2.6.25 printed
// partitions with 4 numbers (reads, sectors read, writes, sectors written);
// those are accepted with `field_count == 4` and carry no extended fields.
// Sectors are always 512 bytes. The *_ms fields are printed by the kernel
// with %u and wrap at 2^32; counts and sectors are 64-bit.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch::collectors {

inline constexpr uint64_t kSectorBytes = 512;

struct DiskCounters {
  uint64_t reads = 0;            // F1 reads completed successfully
  uint64_t reads_merged = 0;     // F2
  uint64_t read_sectors = 0;     // F3
  uint64_t read_ms = 0;          // F4 time spent reading (32-bit in the kernel)
  uint64_t writes = 0;           // F5
  uint64_t writes_merged = 0;    // F6
  uint64_t write_sectors = 0;    // F7
  uint64_t write_ms = 0;         // F8
  uint64_t in_flight = 0;        // F9 I/Os currently in progress (a gauge)
  uint64_t io_ms = 0;            // F10 time the device had I/O in flight ("io_ticks")
  uint64_t weighted_io_ms = 0;   // F11 weighted time ("time_in_queue")
  uint64_t discards = 0;         // F12 (4.18+)
  uint64_t discards_merged = 0;  // F13
  uint64_t discard_sectors = 0;  // F14
  uint64_t discard_ms = 0;       // F15
  uint64_t flushes = 0;          // F16 (5.5+)
  uint64_t flush_ms = 0;         // F17
  int field_count = 0;           // 4, 11, 15 or 17: which of the above the kernel provided

  bool HasExtendedFields() const { return field_count >= 11; }
  // Whether the line had the discard (4.18+) and flush (5.5+) fields: where
  // it had not, they read 0 above, and 0 would say "none" for "not reported".
  bool HasDiscardFields() const { return field_count >= 15; }
  bool HasFlushFields() const { return field_count >= 17; }
  bool operator==(const DiskCounters&) const = default;
};

struct DiskStat {
  uint32_t major = 0;
  uint32_t minor = 0;
  std::string name;
  DiskCounters counters;
};

struct Diskstats {
  std::vector<DiskStat> disks;  // in file order
  std::vector<Error> skipped;   // one per malformed line, with its line number
};

// Parses the counters of one device (the numbers after "major minor name" in
// /proc/diskstats, or a whole sysfs stat file). Accepts 4, 11, 14-15 and
// 17+ numbers; more than 17 (a future kernel) are ignored.
Result<DiskCounters> ParseDiskCounters(std::string_view text, std::string_view path);

// Parses /proc/diskstats. A malformed line is skipped and reported in
// `skipped`; it never aborts the rest of the file.
Diskstats ParseDiskstats(std::string_view text, std::string_view path);

}  // namespace iowatch::collectors
