#include "collectors/block_devices.h"

#include <fmt/format.h>

#include <algorithm>

#include "collectors/text_scan.h"
#include "common/utf8.h"

namespace iowatch::collectors {
namespace {

// sysfs spells a '/' in a kernel device name as '!' ("cciss!c0d0").
std::string KernelName(std::string sysfs_name) {
  std::replace(sysfs_name.begin(), sysfs_name.end(), '!', '/');
  return sysfs_name;
}

std::string Trimmed(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\n");
  return std::string(s.substr(first, last - first + 1));
}

// Attributes become label values, stored text and terminal output: valid
// UTF-8 only, and control characters as spaces (a firmware's model string
// can hold any byte; the store refuses names with control characters).
std::string ReadTrimmed(const FileTree& sysfs, const std::string& path) {
  auto content = sysfs.Read(path, kMaxSysfsAttributeBytes);
  if (!content) return std::string();
  std::string text = ToValidUtf8(Trimmed(*content));
  while (const std::optional<size_t> control = ControlCharacterAt(text)) text[*control] = ' ';
  return text;
}

uint64_t ReadNumber(const FileTree& sysfs, const std::string& path) {
  return ParseU64(ReadTrimmed(sysfs, path)).value_or(0);
}

void ReadDevNumbers(const FileTree& sysfs, const std::string& dir, BlockDevice& device) {
  const std::string dev = ReadTrimmed(sysfs, dir + "/dev");  // "major:minor"
  const size_t colon = dev.find(':');
  const auto major = ParseU64(std::string_view(dev).substr(0, colon));
  const auto minor =
      colon == std::string::npos ? std::nullopt : ParseU64(std::string_view(dev).substr(colon + 1));
  if (!major || !minor || *major > UINT32_MAX || *minor > UINT32_MAX) {
    device.malformed_dev = true;
    return;
  }
  device.major = static_cast<uint32_t>(*major);
  device.minor = static_cast<uint32_t>(*minor);
}

QueueAttributes ReadQueue(const FileTree& sysfs, const std::string& dir) {
  QueueAttributes q;
  const std::string rotational = ReadTrimmed(sysfs, dir + "/queue/rotational");
  if (rotational == "0" || rotational == "1") q.rotational = rotational == "1";
  q.logical_block_size = ReadNumber(sysfs, dir + "/queue/logical_block_size");
  q.physical_block_size = ReadNumber(sysfs, dir + "/queue/physical_block_size");
  q.scheduler = ActiveScheduler(ReadTrimmed(sysfs, dir + "/queue/scheduler"));
  q.nr_requests = ReadNumber(sysfs, dir + "/queue/nr_requests");
  q.max_sectors_kb = ReadNumber(sysfs, dir + "/queue/max_sectors_kb");
  q.read_ahead_kb = ReadNumber(sysfs, dir + "/queue/read_ahead_kb");
  q.optimal_io_size = ReadNumber(sysfs, dir + "/queue/optimal_io_size");
  return q;
}

std::optional<MdGeometry> ReadMd(const FileTree& sysfs, const std::string& dir) {
  if (!sysfs.Exists(dir + "/md")) return std::nullopt;
  return MdGeometry{ReadTrimmed(sysfs, dir + "/md/level"),
                    ReadNumber(sysfs, dir + "/md/chunk_size"),
                    ReadNumber(sysfs, dir + "/md/raid_disks")};
}

// The attributes of a whole disk, whose directory is the parent of stat_path.
void ReadDiskAttributes(const FileTree& sysfs, BlockDevice& disk) {
  const std::string dir = disk.stat_path.substr(0, disk.stat_path.rfind('/'));
  disk.md = ReadMd(sysfs, dir);
  disk.queue = ReadQueue(sysfs, dir);
  disk.model = ReadTrimmed(sysfs, dir + "/device/model");
  disk.serial = ReadTrimmed(sysfs, dir + "/device/serial");
  disk.wwid = ReadTrimmed(sysfs, dir + "/wwid");
  if (disk.wwid.empty()) disk.wwid = ReadTrimmed(sysfs, dir + "/device/wwid");
}

BlockDevice ReadDisk(const FileTree& sysfs, const std::string& entry) {
  const std::string dir = "block/" + entry;
  BlockDevice disk;
  disk.name = KernelName(entry);
  disk.stat_path = dir + "/stat";
  ReadDevNumbers(sysfs, dir, disk);
  disk.dm_name = ReadTrimmed(sysfs, dir + "/dm/name");
  return disk;
}

// The partitions of the disk at block/<entry>. The kernel names partitions
// after their disk ("sda1", "nvme0n1p1", "cciss!c0d0p1"); checking only
// those entries spares a stat() of each of the ~30 attributes of a disk.
void AppendPartitions(const FileTree& sysfs, const std::string& entry, const BlockDevice& disk,
                      std::vector<BlockDevice>& out) {
  std::vector<std::string> children =
      sysfs.List("block/" + entry).value_or(std::vector<std::string>());
  std::sort(children.begin(), children.end());
  for (const std::string& child : children) {
    const std::string dir = fmt::format("block/{}/{}", entry, child);
    if (!child.starts_with(entry) || !sysfs.Exists(dir + "/partition")) continue;
    BlockDevice part;
    part.name = KernelName(child);
    part.is_partition = true;
    part.parent = disk.name;
    part.stat_path = dir + "/stat";
    ReadDevNumbers(sysfs, dir, part);
    part.queue = disk.queue;
    out.push_back(std::move(part));
  }
}

}  // namespace

std::string ActiveScheduler(std::string_view scheduler_file) {
  const size_t open = scheduler_file.find('[');
  const size_t close = scheduler_file.find(']', open);
  if (open != std::string_view::npos && close != std::string_view::npos) {
    return std::string(scheduler_file.substr(open + 1, close - open - 1));
  }
  return Trimmed(scheduler_file);
}

Result<std::vector<BlockDevice>> DiscoverBlockDevices(const FileTree& sysfs, Detail detail) {
  auto entries = sysfs.List("block");
  if (!entries) return std::unexpected(entries.error());
  std::sort(entries->begin(), entries->end());
  std::vector<BlockDevice> devices;
  for (const std::string& entry : *entries) {
    BlockDevice disk = ReadDisk(sysfs, entry);
    if (detail == Detail::kAttributes) ReadDiskAttributes(sysfs, disk);
    devices.push_back(disk);
    AppendPartitions(sysfs, entry, disk, devices);
  }
  return devices;
}

std::optional<BlockDevice> FindWholeDisk(const FileTree& sysfs, uint32_t major, uint32_t minor) {
  auto devices = DiscoverBlockDevices(sysfs, Detail::kNames);
  if (!devices) return std::nullopt;
  const auto found = std::ranges::find_if(*devices, [&](const BlockDevice& d) {
    return !d.malformed_dev && d.major == major && d.minor == minor;
  });
  if (found == devices->end()) return std::nullopt;
  const std::string disk_name = found->is_partition ? found->parent : found->name;
  const auto disk = std::ranges::find(*devices, disk_name, &BlockDevice::name);
  if (disk == devices->end()) return std::nullopt;
  BlockDevice whole = *disk;
  ReadDiskAttributes(sysfs, whole);
  return whole;
}

BlockTopology TopologyOf(const std::vector<BlockDevice>& devices) {
  BlockTopology topology;
  for (const BlockDevice& device : devices) {
    if (device.is_partition) {
      topology.partitions[device.parent].push_back(device.name);
      continue;
    }
    topology.disks.insert(device.name);
    topology.partitions[device.name];  // a disk without partitions has an empty list
    if (!device.dm_name.empty()) topology.dm_names[device.name] = device.dm_name;
  }
  return topology;
}

Result<BlockTopology> ReadBlockTopology(const FileTree& sysfs) {
  auto devices = DiscoverBlockDevices(sysfs, Detail::kNames);
  if (!devices) return std::unexpected(devices.error());
  return TopologyOf(*devices);
}

}  // namespace iowatch::collectors
