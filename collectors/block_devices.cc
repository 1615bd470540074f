#include "collectors/block_devices.h"

#include <algorithm>

#include "collectors/text_scan.h"

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

std::string ReadTrimmed(const FileTree& sysfs, const std::string& path) {
  auto content = sysfs.Read(path);
  return content ? Trimmed(*content) : std::string();
}

uint64_t ReadNumber(const FileTree& sysfs, const std::string& path) {
  return ParseU64(ReadTrimmed(sysfs, path)).value_or(0);
}

void ReadDevNumbers(const FileTree& sysfs, const std::string& dir, BlockDevice& device) {
  const std::string dev = ReadTrimmed(sysfs, dir + "/dev");  // "major:minor"
  const size_t colon = dev.find(':');
  if (colon == std::string::npos) return;
  const auto major = ParseU64(std::string_view(dev).substr(0, colon));
  const auto minor = ParseU64(std::string_view(dev).substr(colon + 1));
  if (major && minor && *major <= UINT32_MAX && *minor <= UINT32_MAX) {
    device.major = static_cast<uint32_t>(*major);
    device.minor = static_cast<uint32_t>(*minor);
  }
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

BlockDevice ReadDisk(const FileTree& sysfs, const std::string& name) {
  const std::string dir = "block/" + name;
  BlockDevice disk;
  disk.name = name;
  disk.stat_path = dir + "/stat";
  ReadDevNumbers(sysfs, dir, disk);
  disk.dm_name = ReadTrimmed(sysfs, dir + "/dm/name");
  disk.md = ReadMd(sysfs, dir);
  disk.queue = ReadQueue(sysfs, dir);
  disk.model = ReadTrimmed(sysfs, dir + "/device/model");
  disk.serial = ReadTrimmed(sysfs, dir + "/device/serial");
  disk.wwid = ReadTrimmed(sysfs, dir + "/wwid");
  if (disk.wwid.empty()) disk.wwid = ReadTrimmed(sysfs, dir + "/device/wwid");
  return disk;
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

Result<std::vector<BlockDevice>> DiscoverBlockDevices(const FileTree& sysfs) {
  auto names = sysfs.List("block");
  if (!names) return std::unexpected(names.error());
  std::sort(names->begin(), names->end());
  std::vector<BlockDevice> devices;
  for (const std::string& name : *names) {
    BlockDevice disk = ReadDisk(sysfs, name);
    std::vector<std::string> children =
        sysfs.List("block/" + name).value_or(std::vector<std::string>());
    std::sort(children.begin(), children.end());
    const QueueAttributes disk_queue = disk.queue;
    devices.push_back(std::move(disk));
    for (const std::string& child : children) {
      const std::string dir = "block/" + name + "/" + child;
      if (!sysfs.Exists(dir + "/partition")) continue;
      BlockDevice part;
      part.name = child;
      part.is_partition = true;
      part.parent = name;
      part.stat_path = dir + "/stat";
      ReadDevNumbers(sysfs, dir, part);
      part.queue = disk_queue;
      devices.push_back(std::move(part));
    }
  }
  return devices;
}

Result<BlockTopology> ReadBlockTopology(const FileTree& sysfs) {
  auto entries = sysfs.List("block");
  if (!entries) return std::unexpected(entries.error());
  BlockTopology topology;
  for (const std::string& entry : *entries) {
    const std::string disk = KernelName(entry);
    topology.disks.insert(disk);
    auto& parts = topology.partitions[disk];
    for (const std::string& child :
         sysfs.List("block/" + entry).value_or(std::vector<std::string>())) {
      // The kernel names partitions after their disk ("sda1", "nvme0n1p1"); checking
      // only those entries spares a stat() of each of the ~30 attributes of a disk.
      if (child.starts_with(entry) && sysfs.Exists("block/" + entry + "/" + child + "/partition")) {
        parts.push_back(KernelName(child));
      }
    }
    if (auto dm = sysfs.Read("block/" + entry + "/dm/name")) {
      while (!dm->empty() && (dm->back() == '\n' || dm->back() == ' ')) dm->pop_back();
      if (!dm->empty()) topology.dm_names[disk] = *dm;
    }
  }
  return topology;
}

}  // namespace iowatch::collectors
