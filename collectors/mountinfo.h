// The mount table of a mount namespace, from <procfs>/self/mountinfo
// (proc(5): "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root
// rw,errors=continue"): every mount with its filesystem's device number, the
// subtree of the filesystem it shows (root), where, with which per-mount and
// superblock options. The one parser of the file: the cgroup hierarchies and
// the filesystem collector both read it through here.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch::collectors {

struct Mount {
  uint32_t id = 0;
  uint32_t parent_id = 0;  // the mount this one sits on (itself, or absent, for the root)
  uint32_t major = 0;      // st_dev of the filesystem: 0 for those without a block device
  uint32_t minor = 0;
  std::string root;         // the filesystem's directory shown here: "/" unless a bind of a subtree
  std::string mount_point;  // unescaped ("\040" is a space)
  std::string mount_options;  // this mount's: "rw,nosuid,relatime"
  std::string fstype;         // "ext4", "fuse.sshfs"
  std::string source;         // "/dev/sda1", "tmpfs", "none"
  std::string super_options;  // the filesystem's (superblock's): "rw,errors=remount-ro"
  bool operator==(const Mount&) const = default;
};

struct Mountinfo {
  std::vector<Mount> mounts;   // in the file's order
  std::vector<Error> skipped;  // malformed lines (path:line, what was expected), not read
};

Mountinfo ParseMountinfo(std::string_view text, std::string_view path);

// Whether the comma-separated `options` hold `wanted` exactly ("ro", not "errors=remount-ro").
bool HasMountOption(std::string_view options, std::string_view wanted);

}  // namespace iowatch::collectors
