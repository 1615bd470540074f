// node_exporter 1.8's default filesystem exclusions (collector/
// filesystem_linux.go), RE2 on the whole name: pseudo and virtual filesystem
// types, and the mount points of the kernel's trees and container stores.
// Here, below both, because the config's defaults (config/config.h) and the
// filesystem parser's own (collectors/filesystem/) are the same two patterns.
// Thread-safety: constants.
#pragma once

namespace iowatch {

inline constexpr char kDefaultFsTypesExclude[] =
    "^(autofs|binfmt_misc|bpf|cgroup2?|configfs|debugfs|devpts|devtmpfs|fusectl|hugetlbfs|"
    "iso9660|mqueue|nsfs|overlay|proc|procfs|pstore|rpc_pipefs|securityfs|selinuxfs|squashfs|"
    "erofs|sysfs|tracefs)$";
// node_exporter matches "^/(dev|proc|run/credentials/.+|sys|var/lib/docker/.+|
// var/lib/containers/storage/.+)($|/)" anywhere in the path; iowatch's
// patterns match the whole path, so this is the same set written whole.
inline constexpr char kDefaultMountPointsExclude[] =
    "^/(dev|proc|sys)(/.*)?$|^/(run/credentials|var/lib/docker|var/lib/containers/storage)/.+$";

}  // namespace iowatch
