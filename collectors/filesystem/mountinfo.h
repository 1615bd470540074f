// The mount table of a mount namespace, from <procfs>/self/mountinfo
// (proc(5): "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root
// rw,errors=continue"): every mount with its filesystem's device number, the
// subtree of the filesystem it shows (root), where, with which per-mount and
// superblock options. The one parser of the file: the cgroup hierarchies and
// the filesystem source both read it through here.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/file_tree.h"
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

// One line (number `number` of `path`) into `out`: a mount, or a skipped line.
void ParseMountinfoLine(std::string_view line, int number, std::string_view path, Mountinfo& out);

// What ReadMountinfo keeps. A host can hold ~100,000 mounts (fs.mount-max)
// with paths of up to 4 KiB (16 KiB escaped): a whole-file read under
// procfs's 4 MiB cap would lose the root with the rest; streamed, the table
// is read a line at a time and the mounts past max_bytes are dropped and
// counted (mountinfo lists the namespace's root first).
struct MountinfoLimits {
  size_t max_bytes = 64 << 20;      // of lines kept
  size_t max_line_bytes = 1 << 20;  // a longer line is dropped (none is: ~5 paths of 16 KiB)
};

// The table's text as ReadMountinfo keeps it: each line dropped for the
// limits is an empty line (the numbers of the others hold), and `dropped`
// names the first of them and how many. A sampler compares it with the last
// sample's and parses only a table that changed: 36,000 mounts take 50 ms to
// read and several times that to parse.
struct MountinfoText {
  std::string text;
  std::optional<Error> dropped;
};

// <procfs>/relative ("self/mountinfo"), streamed. Errors: the file's (cannot
// open or read).
Result<MountinfoText> ReadMountinfoText(const FileTree& procfs, std::string_view relative,
                                        const MountinfoLimits& limits = {});

// The mounts of a text ReadMountinfoText read from `path`; its dropped lines
// are the first `skipped` entry.
Mountinfo ParseMountinfoText(const MountinfoText& table, std::string_view path);

// ReadMountinfoText, then ParseMountinfoText.
Result<Mountinfo> ReadMountinfo(const FileTree& procfs, std::string_view relative,
                                const MountinfoLimits& limits = {});

// Whether the comma-separated `options` hold `wanted` exactly ("ro", not "errors=remount-ro").
bool HasMountOption(std::string_view options, std::string_view wanted);

}  // namespace iowatch::collectors
