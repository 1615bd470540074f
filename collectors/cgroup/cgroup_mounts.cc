#include "collectors/cgroup/cgroup_mounts.h"

#include "collectors/filesystem/mountinfo.h"

namespace iowatch::collectors {

Result<CgroupMounts> ParseCgroupMounts(std::string_view mountinfo, std::string_view path) {
  Mountinfo table = ParseMountinfo(mountinfo, path);
  if (!table.skipped.empty()) return std::unexpected(std::move(table.skipped.front()));
  CgroupMounts mounts;
  for (Mount& m : table.mounts) {
    if (m.fstype == "cgroup2" && !mounts.unified) {
      mounts.unified = std::move(m.mount_point);
    } else if (m.fstype == "cgroup" && !mounts.blkio && HasMountOption(m.super_options, "blkio")) {
      mounts.blkio = std::move(m.mount_point);
    }
  }
  return mounts;
}

std::optional<std::string> RelativeToSysfs(std::string_view mount_point) {
  if (mount_point == "/sys") return std::string(".");
  if (!mount_point.starts_with("/sys/")) return std::nullopt;
  return std::string(mount_point.substr(5));
}

}  // namespace iowatch::collectors
