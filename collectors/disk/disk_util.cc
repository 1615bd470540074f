#include "collectors/disk/disk_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "collectors/disk/iostat.h"

namespace iowatch::collectors {

Result<DiskCounters> ReadDeviceCounters(const FileTree& sysfs, uint32_t major, uint32_t minor) {
  const std::string path = fmt::format("dev/block/{}:{}/stat", major, minor);
  auto text = sysfs.Read(path, kMaxSysfsAttributeBytes);
  if (!text) return ErrorOf(std::move(text));
  return ParseDiskCounters(*text, sysfs.PathOf(path).string());
}

Result<DiskCounters> ReadDeviceCounters(const FileTree& sysfs, const BlockDevice& device) {
  auto text = sysfs.Read(device.stat_path, kMaxSysfsAttributeBytes);
  if (!text) return ErrorOf(std::move(text));
  return ParseDiskCounters(*text, sysfs.PathOf(device.stat_path).string());
}

DiskUtil ComputeDiskUtil(std::string name, const DiskCounters& before, const DiskCounters& after,
                         double elapsed_ms) {
  DiskUtil u;
  u.name = std::move(name);
  u.read_ios = after.reads - before.reads;
  u.write_ios = after.writes - before.writes;
  u.read_merges = after.reads_merged - before.reads_merged;
  u.write_merges = after.writes_merged - before.writes_merged;
  u.read_ticks = TickDelta(before.read_ms, after.read_ms);
  u.write_ticks = TickDelta(before.write_ms, after.write_ms);
  u.in_queue = TickDelta(before.weighted_io_ms, after.weighted_io_ms);
  const double busy_ms = static_cast<double>(TickDelta(before.io_ms, after.io_ms));
  u.util_percent = elapsed_ms > 0 ? std::min(100.0, 100.0 * busy_ms / elapsed_ms) : 0;
  return u;
}

}  // namespace iowatch::collectors
