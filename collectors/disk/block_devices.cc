#include "collectors/disk/block_devices.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>

#include "collectors/disk/diskstats.h"
#include "collectors/md/md_sysfs.h"
#include "collectors/text/text_scan.h"
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
  q.max_hw_sectors_kb = ReadNumber(sysfs, dir + "/queue/max_hw_sectors_kb");
  q.read_ahead_kb = ReadNumber(sysfs, dir + "/queue/read_ahead_kb");
  q.minimum_io_size = ReadNumber(sysfs, dir + "/queue/minimum_io_size");
  q.optimal_io_size = ReadNumber(sysfs, dir + "/queue/optimal_io_size");
  return q;
}

// Through collectors/md's readers, so md/ is read and parsed one way; here an
// absent, unreadable or malformed attribute is 0 (discovery goes on).
std::optional<MdGeometry> ReadMd(const FileTree& sysfs, const std::string& dir) {
  const std::string md = dir + "/md";
  if (!sysfs.Exists(md)) return std::nullopt;
  const auto number = [&](std::string_view name) {
    return ReadMdSysfsNumber(sysfs, md, name).value_or(std::nullopt).value_or(0);
  };
  const std::optional<MdRaidDisks> raid_disks = ReadMdRaidDisks(sysfs, md).value_or(std::nullopt);
  return MdGeometry{ReadMdSysfsText(sysfs, md, "level").value_or(std::nullopt).value_or(""),
                    number("chunk_size"), raid_disks ? raid_disks->count : 0, number("layout")};
}

std::string DirOf(const BlockDevice& device) {
  return device.stat_path.substr(0, device.stat_path.rfind('/'));
}

// Identity as a fleet compares disks: what the device reports of itself.
void ReadIdentity(const FileTree& sysfs, const std::string& dir, BlockDevice& disk) {
  disk.model = ReadTrimmed(sysfs, dir + "/device/model");
  disk.serial = ReadTrimmed(sysfs, dir + "/device/serial");
  if (disk.serial.empty()) disk.serial = ReadTrimmed(sysfs, dir + "/serial");  // virtio
  disk.wwid = ReadTrimmed(sysfs, dir + "/wwid");
  if (disk.wwid.empty()) disk.wwid = ReadTrimmed(sysfs, dir + "/device/wwid");
  disk.wwn = WwnOf(disk.wwid);
  disk.firmware_rev = ReadTrimmed(sysfs, dir + "/device/firmware_rev");
  if (disk.firmware_rev.empty()) disk.firmware_rev = ReadTrimmed(sysfs, dir + "/device/rev");
  disk.vendor = ReadTrimmed(sysfs, dir + "/device/vendor");
  disk.transport =
      TransportOf(disk.name, sysfs.Exists(dir + "/dm"), sysfs.Exists(dir + "/md"),
                  sysfs.Exists(dir + "/loop"), ReadTrimmed(sysfs, dir + "/device/modalias"));
  disk.loop_backing_file = ReadTrimmed(sysfs, dir + "/loop/backing_file");
}

// holders/ of a disk or partition directory, as the disk's Holder entries.
void AppendHolders(const FileTree& sysfs, const std::string& dir, const std::string& partition,
                   std::vector<Holder>& out) {
  for (const std::string& entry :
       sysfs.List(dir + "/holders").value_or(std::vector<std::string>())) {
    if (entry.starts_with('.')) continue;
    out.push_back({partition, KernelName(entry)});
  }
}

// The attributes of a whole disk, whose directory is the parent of stat_path.
void ReadDiskAttributes(const FileTree& sysfs, BlockDevice& disk) {
  const std::string dir = DirOf(disk);
  disk.md = ReadMd(sysfs, dir);
  disk.queue = ReadQueue(sysfs, dir);
  disk.size_bytes = ReadNumber(sysfs, dir + "/size") * kSectorBytes;
  ReadIdentity(sysfs, dir, disk);
  disk.diskseq = ReadDiskseq(sysfs, disk);
  AppendHolders(sysfs, dir, "", disk.holders);
}

// Each loop device's backing file, placed on the disk (or partition) holding it.
void PlaceLoopBackingFiles(std::vector<BlockDevice>& devices, DeviceOfFile device_of_file) {
  for (const BlockDevice& loop : devices) {
    if (loop.loop_backing_file.empty()) continue;
    const std::optional<uint64_t> dev = device_of_file(loop.loop_backing_file);
    if (!dev) continue;
    const auto held = std::ranges::find_if(devices, [&](const BlockDevice& d) {
      return !d.malformed_dev && makedev(d.major, d.minor) == *dev;
    });
    if (held == devices.end()) continue;  // tmpfs, NFS, overlayfs: no block device
    const std::string disk_name = held->is_partition ? held->parent : held->name;
    const auto disk = std::ranges::find(devices, disk_name, &BlockDevice::name);
    if (disk == devices.end()) continue;
    disk->holders.push_back({held->is_partition ? held->name : "", loop.name});
  }
  for (BlockDevice& device : devices)
    std::ranges::sort(device.holders, {},
                      [](const Holder& h) { return std::tie(h.partition, h.holder); });
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

// The partitions of the disk at block/<entry>; with kAttributes, their sizes,
// and their holders added to the disk's. The kernel names partitions
// after their disk ("sda1", "nvme0n1p1", "cciss!c0d0p1"); checking only
// those entries spares a stat() of each of the ~30 attributes of a disk.
std::vector<BlockDevice> ReadPartitions(const FileTree& sysfs, const std::string& entry,
                                        BlockDevice& disk, Detail detail) {
  std::vector<BlockDevice> out;
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
    if (detail == Detail::kAttributes) {
      part.size_bytes = ReadNumber(sysfs, dir + "/size") * kSectorBytes;
      part.start_sector = ReadNumber(sysfs, dir + "/start");
      AppendHolders(sysfs, dir, part.name, disk.holders);
    }
    out.push_back(std::move(part));
  }
  return out;
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

std::string TransportOf(std::string_view name, bool has_dm, bool has_md, bool has_loop,
                        std::string_view modalias) {
  if (has_dm) return "dm";
  if (has_md) return "md";
  if (has_loop) return "loop";
  for (const std::string_view bus : {"virtio", "scsi", "mmc", "xen"}) {
    if (modalias.starts_with(bus) && modalias.substr(bus.size()).starts_with(':')) {
      return std::string(bus);
    }
  }
  // An NVMe namespace's device is its controller, which has no modalias; a
  // loop device with no file attached has no loop/ directory.
  constexpr std::pair<std::string_view, std::string_view> kPrefixes[] = {
      {"nvme", "nvme"}, {"mmcblk", "mmc"}, {"xvd", "xen"},   {"vd", "virtio"}, {"nbd", "nbd"},
      {"zram", "zram"}, {"ram", "ram"},    {"loop", "loop"}, {"sd", "scsi"},   {"sr", "scsi"}};
  for (const auto& [prefix, transport] : kPrefixes) {
    if (name.starts_with(prefix)) return std::string(transport);
  }
  return {};
}

DeviceIdentity DeviceIdentityOf(const BlockDevice& device) {
  return {device.major, device.minor, device.diskseq, device.wwid, device.serial};
}

bool SameDevice(const DeviceIdentity& a, const DeviceIdentity& b) {
  const auto differ = [](const auto& x, const auto& y, const auto& unknown) {
    return x != unknown && y != unknown && x != y;
  };
  return a.major == b.major && a.minor == b.minor &&
         !differ(a.diskseq, b.diskseq, std::optional<uint64_t>()) &&
         !differ(a.wwid, b.wwid, std::string()) && !differ(a.serial, b.serial, std::string());
}

std::optional<uint64_t> ReadDiskseq(const FileTree& sysfs, const BlockDevice& device) {
  if (device.is_partition) return std::nullopt;
  return ParseU64(ReadTrimmed(sysfs, DirOf(device) + "/diskseq"));
}

std::string WwnOf(std::string_view wwid) {
  if (wwid.starts_with("naa.")) return "0x" + std::string(wwid.substr(4));
  if (wwid.starts_with("eui.")) return std::string(wwid);
  return {};
}

std::optional<uint64_t> StatDeviceOfFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return st.st_dev;
}

Result<std::vector<BlockDevice>> DiscoverBlockDevices(const FileTree& sysfs, Detail detail,
                                                      DeviceOfFile device_of_file) {
  auto entries = sysfs.List("block");
  if (!entries) return ErrorOf(entries);
  std::sort(entries->begin(), entries->end());
  std::vector<BlockDevice> devices;
  for (const std::string& entry : *entries) {
    BlockDevice disk = ReadDisk(sysfs, entry);
    if (detail == Detail::kAttributes) ReadDiskAttributes(sysfs, disk);
    std::vector<BlockDevice> partitions = ReadPartitions(sysfs, entry, disk, detail);
    devices.push_back(std::move(disk));
    std::ranges::move(partitions, std::back_inserter(devices));
  }
  if (detail == Detail::kAttributes) PlaceLoopBackingFiles(devices, device_of_file);
  return devices;
}

namespace {

// Device major:minor in `devices` and the name of its whole disk; null when absent.
std::pair<const BlockDevice*, std::string> DeviceAndDisk(const std::vector<BlockDevice>& devices,
                                                         uint32_t major, uint32_t minor) {
  const auto found = std::ranges::find_if(devices, [&](const BlockDevice& d) {
    return !d.malformed_dev && d.major == major && d.minor == minor;
  });
  if (found == devices.end()) return {nullptr, {}};
  return {&*found, found->is_partition ? found->parent : found->name};
}

}  // namespace

std::optional<DeviceNames> FindDeviceNames(const FileTree& sysfs, uint32_t major, uint32_t minor) {
  auto devices = DiscoverBlockDevices(sysfs, Detail::kNames);
  if (!devices) return std::nullopt;
  auto [device, disk] = DeviceAndDisk(*devices, major, minor);
  if (device == nullptr) return std::nullopt;
  return DeviceNames{device->name, std::move(disk)};
}

std::optional<BlockDevice> FindWholeDisk(const FileTree& sysfs, uint32_t major, uint32_t minor) {
  auto devices = DiscoverBlockDevices(sysfs, Detail::kNames);
  if (!devices) return std::nullopt;
  const auto [device, disk_name] = DeviceAndDisk(*devices, major, minor);
  if (device == nullptr) return std::nullopt;
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
  if (!devices) return ErrorOf(devices);
  return TopologyOf(*devices);
}

uint64_t AlignmentUnitBytes(const BlockDevice& device) {
  if (device.queue.optimal_io_size > 0) return device.queue.optimal_io_size;
  if (device.md && device.md->chunk_bytes > 0) return device.md->chunk_bytes;
  return device.queue.physical_block_size;
}

}  // namespace iowatch::collectors
