// Where the cgroup hierarchies that count block I/O are mounted, from
// /proc/self/mountinfo (proc(5): "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1
// - ext3 /dev/root rw,errors=continue"): the cgroup v2 (unified) mount, and
// the v1 mount whose super options include the blkio controller. A hybrid
// host (systemd's default before v2 became the default, and this machine)
// has both: v1 blkio counts the I/O, v2 has io.pressure.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace iowatch::collectors {

struct CgroupMounts {
  std::optional<std::string> unified;  // cgroup2 mount point, e.g. "/sys/fs/cgroup"
  std::optional<std::string> blkio;    // cgroup v1 blkio mount point, "/sys/fs/cgroup/blkio"
};

// Malformed lines fail with path:line and the expected layout; lines of
// other filesystems are skipped unread past their type.
Result<CgroupMounts> ParseCgroupMounts(std::string_view mountinfo, std::string_view path);

// A mount point under /sys as a path relative to the sysfs tree
// ("/sys/fs/cgroup/blkio" -> "fs/cgroup/blkio"), so that --path.sysfs
// fixtures hold cgroup trees too; nullopt for a mount elsewhere.
std::optional<std::string> RelativeToSysfs(std::string_view mount_point);

}  // namespace iowatch::collectors
