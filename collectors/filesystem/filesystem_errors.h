// The error counters filesystems keep in sysfs, per mounted filesystem:
// ext4's /sys/fs/ext4/<dev>/errors_count with the first and last error's time
// (kept in the superblock: errors since mkfs, across mounts and reboots;
// ext4's trigger_fs_error raises a real one), and btrfs's per-device
// /sys/fs/btrfs/<fsid>/devinfo/<devid>/error_stats (write, read, flush,
// corruption and generation errors since the counters were last reset,
// kernel 5.14+). XFS keeps no error count there: its failures show as
// statvfs errors and a shutdown.
// Thread-safety: pure functions over a FileTree.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::collectors {

struct Ext4Errors {
  uint64_t count = 0;
  uint64_t first_time = 0;  // seconds since the epoch; 0: no error recorded
  uint64_t last_time = 0;
  bool operator==(const Ext4Errors&) const = default;
};

// <sysfs>/fs/ext4/<device>/{errors_count,first_error_time,last_error_time};
// `device` is the kernel name ("sda1", "dm-0").
Result<Ext4Errors> ReadExt4Errors(const FileTree& sysfs, std::string_view device);

// btrfs's names, in error_stats' order.
inline constexpr std::array<std::string_view, 5> kBtrfsErrorTypes = {"write", "read", "flush",
                                                                     "corruption", "generation"};

struct BtrfsDeviceErrors {
  std::string devid;  // the device's number in the filesystem ("1")
  std::array<uint64_t, kBtrfsErrorTypes.size()> counts{};
  bool operator==(const BtrfsDeviceErrors&) const = default;
};

// A block device's number (major:minor), of the node a path names.
struct BlockDeviceNumber {
  uint32_t major = 0;
  uint32_t minor = 0;
  bool operator==(const BlockDeviceNumber&) const = default;
};
using BlockDeviceOfPath = std::function<Result<BlockDeviceNumber>(const std::string& path)>;

// stat(2) of `path` (links followed): its st_rdev when it is a block device,
// else kInvalidArgument. btrfs mounts show an anonymous device number and a
// source path ("/dev/mapper/vg-data", "/dev/disk/by-id/..."); the number of
// that path's device is what leads to its kernel name ("dm-0"), the name
// /sys/fs/btrfs/<fsid>/devices/ lists.
Result<BlockDeviceNumber> StatBlockDevice(const std::string& path);

// The fsid of the btrfs filesystem that has the block device `device`
// (kernel name) among its devices: <sysfs>/fs/btrfs/<fsid>/devices/<device>.
Result<std::string> FindBtrfsFsid(const FileTree& sysfs, std::string_view device);

// Every device of filesystem `fsid`, by devid.
Result<std::vector<BtrfsDeviceErrors>> ReadBtrfsErrors(const FileTree& sysfs,
                                                       std::string_view fsid);

}  // namespace iowatch::collectors
