// Which filesystems the filesystem source reports, from the mount table
// (collectors/filesystem/mountinfo.h): node_exporter's selection (pseudo and virtual
// filesystem types and the mount points under /dev, /proc, /sys, the
// container stores excluded by default, both filters RE2 on the whole name),
// then ONE mount per filesystem. A filesystem is its device number
// (major:minor): a bind mount, or the same filesystem mounted twice, shows the
// same statvfs figures, and node_exporter's one series per mount point adds
// them up twice in sum(). The mount kept is the first in the table that
// iowatch can reach (a lookup of its mount point ends in it: decided on the
// mount tree, mountinfo's parent ids, not on the table's order) and shows the
// whole filesystem (root "/"), else the first reachable one, else the first
// (then `reachable` is false: the source says so rather than read what
// covers it, as systemd's ProtectHome= does to /home inside a service). Two
// filesystems with the same source and type stacked on one mount point are
// one label set: only the one the mount point shows (the top) is kept.
// Thread-safety: pure functions; a filter is immutable once made.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collectors/disk/device_filter.h"
#include "collectors/filesystem/mountinfo.h"
#include "common/filesystem_defaults.h"
#include "common/result.h"

namespace iowatch::collectors {

struct FilesystemFilter {
  DeviceFilter fs_types;      // on Mount::fstype
  DeviceFilter mount_points;  // on Mount::mount_point
  bool Matches(const Mount& mount) const {
    return fs_types.Matches(mount.fstype) && mount_points.Matches(mount.mount_point);
  }
};

// The filter of these patterns ("" = none); the error names the bad one.
Result<FilesystemFilter> MakeFilesystemFilter(const std::string& fs_types_include,
                                              const std::string& fs_types_exclude,
                                              const std::string& mount_points_include,
                                              const std::string& mount_points_exclude);

// kDefaultFsTypesExclude and kDefaultMountPointsExclude, nothing included only.
FilesystemFilter DefaultFilesystemFilter();

struct FilesystemMount {
  Mount mount;
  bool reachable = true;  // its mount point leads to it in this namespace
  bool operator==(const FilesystemMount&) const = default;
};

// One mount per filesystem the filter keeps, in mount table order.
// (The table is taken by value: a caller done with it moves it in, and 36,000
// mounts are not copied.)
std::vector<FilesystemMount> SelectFilesystems(std::vector<Mount> mounts,
                                               const FilesystemFilter& filter);

// A mount point or source as a label value, distinct for distinct paths:
// valid UTF-8 as it is, each byte that is not (and the backslash) as
// mountinfo writes an escaped byte, "\ooo" ("/m/x\377", "/m/x\376"), where
// turning both into U+FFFD would give two mounts one label set.
std::string MountLabel(std::string_view raw);

}  // namespace iowatch::collectors
