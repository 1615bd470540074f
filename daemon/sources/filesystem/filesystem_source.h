// The filesystem source: each sample, the mount table (<procfs>/self/mountinfo;
// parsed, and the filesystems chosen and described, only when its text
// changed, on a thread of its own: mount_table.h), one mount per filesystem
// the filters keep (collectors/filesystem/filesystem_mounts.h), and each
// one's statvfs through a UsageAsker, so a
// mount that hangs is marked (device_error) and skipped until it answers,
// never a delay of the sample. When the sample's time runs out before every
// mount is asked, the next sample starts where it stopped (every mount gets
// its turn; each keeps its last figures between turns). A btrfs mount's fsid
// is looked up once, when it appears. Reports the collector "filesystem": it
// fails when mountinfo cannot be read (it is streamed: its size is no
// limit); a mount whose statvfs fails is its own
// device_error, not the collector's. Read-only is the superblock's state
// (mountinfo's super options): the per-mount flag would say every mount of a
// service under ProtectSystem=strict is read-only.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include "common/filesystem_defaults.h"
#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& FilesystemSourceDescriptor();

// Its settings (daemon/sources/filesystem/iowatch.yaml documents them):
// node_exporter's selection, RE2 on the whole fstype and mount point ("" =
// no filter), and how long one mount's statvfs may take.
inline constexpr auto kFilesystemEnabled =
    config::BoolSetting("collectors.filesystem.enabled", "true");
inline constexpr auto kFsTypesInclude =
    config::RegexSetting("collectors.filesystem.fs_types_include");
inline constexpr auto kFsTypesExclude =
    config::RegexSetting("collectors.filesystem.fs_types_exclude", kDefaultFsTypesExclude);
inline constexpr auto kMountPointsInclude =
    config::RegexSetting("collectors.filesystem.mount_points_include");
inline constexpr auto kMountPointsExclude =
    config::RegexSetting("collectors.filesystem.mount_points_exclude", kDefaultMountPointsExclude);
inline constexpr auto kMountTimeout =
    config::DurationSetting("collectors.filesystem.mount_timeout", "1s", 1);

// The families it renders (filesystem_families.cc).
void AddFilesystemFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
