// A whole disk's counters read by device number (/sys/dev/block/M:m/stat,
// the diskstats fields of Documentation/admin-guide/iostats.rst), and fio's
// disk utilisation report of a run computed from two such readings: the
// "Disk stats (read/write)" line and JSON disk_util[] (name, read_ios,
// write_ios, read_merges, write_merges, read_ticks, write_ticks, in_queue,
// util). fio samples the disk every 250 ms from its own thread, so its
// window starts and ends up to a sample away from the I/O; iowatch reads
// the counters when the measured phase starts and when the run ends.
// Thread-safety: a file read and pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "collectors/disk/block_devices.h"
#include "collectors/disk/diskstats.h"
#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::collectors {

// The counters of device major:minor from <sysfs>/dev/block/M:m/stat.
Result<DiskCounters> ReadDeviceCounters(const FileTree& sysfs, uint32_t major, uint32_t minor);
// The same from a discovered device's own stat file (its stat_path).
Result<DiskCounters> ReadDeviceCounters(const FileTree& sysfs, const BlockDevice& device);

struct DiskUtil {
  std::string name;  // kernel name, as fio prints it
  uint64_t read_ios = 0;
  uint64_t write_ios = 0;
  uint64_t read_merges = 0;
  uint64_t write_merges = 0;
  uint64_t read_ticks = 0;  // ms
  uint64_t write_ticks = 0;
  uint64_t in_queue = 0;    // ms, the weighted time (time_in_queue)
  double util_percent = 0;  // io_ticks over the elapsed time, at most 100
  bool operator==(const DiskUtil&) const = default;
};

// The growth from `before` to `after` over `elapsed_ms`; the 32-bit tick
// fields are taken modulo 2^32, as the kernel wraps them.
DiskUtil ComputeDiskUtil(std::string name, const DiskCounters& before, const DiskCounters& after,
                         double elapsed_ms);

}  // namespace iowatch::collectors
