#include "collectors/cgroup/cgroup_ids.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

namespace iowatch::collectors {

Result<CgroupIds> ScanCgroupIds(const FileTree& sysfs, const CgroupLayout& layout,
                                size_t max_cgroups) {
  auto root = sysfs.InodeOf(layout.io_root);
  if (!root) return ErrorOf(std::move(root));
  CgroupIds ids;
  ids.paths.emplace(*root, "");
  std::vector<std::string> pending = {""};  // depth first; order does not matter
  while (!pending.empty()) {
    const std::string parent = std::move(pending.back());
    pending.pop_back();
    const std::string dir =
        parent.empty() ? layout.io_root : fmt::format("{}/{}", layout.io_root, parent);
    auto children = sysfs.ListDirectoryInodes(dir);
    if (!children) continue;  // removed meanwhile
    for (DirectoryEntry& child : *children) {
      if (ids.paths.size() >= max_cgroups) {
        ids.truncated = true;
        return ids;
      }
      std::string path =
          parent.empty() ? std::move(child.name) : fmt::format("{}/{}", parent, child.name);
      ids.paths.emplace(child.inode, path);
      pending.push_back(std::move(path));
    }
  }
  return ids;
}

}  // namespace iowatch::collectors
