// MountTable: one reading of the mount table as the filesystem source uses
// it: the filesystems the filters keep, each described (labels, whole disk,
// read-only state, a btrfs mount's fsid). BuildMountTable runs on a worker
// of its own: with 36,000 mounts the kernel's text, its parse and the labels
// take 0.3-0.5 s, more than a sample may wait, and a container host mounts
// and unmounts all day. It touches nothing but its inputs.
// DeviceNameCache: the kernel names of each device number, looked up in
// sysfs once; the builder and the source each use their own copy.
// Thread-safety: a MountTableInputs and its result belong to one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectors/disk/block_devices.h"
#include "collectors/filesystem/filesystem_mounts.h"
#include "common/file_tree.h"
#include "common/result.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"

namespace iowatch::daemon {

// The mount table, under the procfs root.
inline constexpr char kMountinfoRelative[] = "self/mountinfo";

class DeviceNameCache {
 public:
  // The names of major:minor (empty for 0, no block device: tmpfs, NFS,
  // FUSE, btrfs' anonymous numbers), walking sysfs only for one not seen.
  const collectors::DeviceNames& Of(const FileTree& sysfs, uint32_t major, uint32_t minor);
  // Forgets the devices no filesystem of `series` is on (a container's tmpfs).
  void KeepOnly(const std::vector<FilesystemSeries>& series);

 private:
  std::map<std::pair<uint32_t, uint32_t>, collectors::DeviceNames> names_;
};

struct MountTable {
  std::shared_ptr<const std::string> text;  // mountinfo as read (collectors::MountinfoText)
  std::shared_ptr<const SamplerOptions> options;
  std::vector<Error> skipped;  // its malformed lines
  std::vector<collectors::FilesystemMount> selected;
  std::vector<FilesystemSeries> described;  // each selected's series but its usage and errors
  // Each selected btrfs mount's fsid, by its source's kernel name; none for
  // other types, or where /sys/fs/btrfs lists no such device.
  std::vector<std::optional<std::string>> btrfs_fsids;
  // Each selected's index in the table in use when this one was built (the
  // same mount: its id and device number), kNew when it was not there: what
  // it knew carries over without a 36,000-entry lookup in the sample.
  static constexpr size_t kNew = static_cast<size_t>(-1);
  std::vector<size_t> before;
};

struct MountTableInputs {
  FileTree procfs;
  FileTree sysfs;
  std::shared_ptr<const SamplerOptions> options;
  // The table in use (null: none): the same text and options are not built
  // again, and a new table's mounts are found in it.
  std::shared_ptr<const MountTable> in_use;
  DeviceNameCache names;  // the builder's copy, handed back with its result
};

struct MountTableBuild {
  // The new table; nullopt when it is the one in use; an error when
  // mountinfo cannot be read or a filter does not compile.
  Result<std::optional<MountTable>> table = std::nullopt;
  DeviceNameCache names;
};

// Reads <procfs>/self/mountinfo (kMountinfoRelative) and, when it or the options differ from
// those in use, parses, selects and describes it.
MountTableBuild BuildMountTable(MountTableInputs inputs);

}  // namespace iowatch::daemon
