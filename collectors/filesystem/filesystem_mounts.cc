#include "collectors/filesystem/filesystem_mounts.h"

#include <map>
#include <utility>

namespace iowatch::collectors {
namespace {

// Whether each mount is what a lookup of its mount point finds: nothing is
// stacked on it at the same place, and the lookup reaches its place (a
// mount under a covered one is hidden with it).
std::vector<bool> Reachable(const std::vector<Mount>& mounts) {
  std::map<uint32_t, size_t> by_id;
  for (size_t i = 0; i < mounts.size(); ++i) by_id.emplace(mounts[i].id, i);
  std::vector<bool> covered(mounts.size(), false);
  for (const Mount& m : mounts) {
    const auto parent = by_id.find(m.parent_id);
    if (parent != by_id.end() && mounts[parent->second].mount_point == m.mount_point &&
        parent->second != by_id[m.id]) {
      covered[parent->second] = true;
    }
  }
  // A lookup of a mount's point passes through the mount it sits on: that one
  // must be reachable too, unless this mount is stacked right on it (then
  // the lookup that would have found it finds this one).
  std::vector<bool> path_ok(mounts.size(), false);
  std::vector<bool> reachable(mounts.size(), false);
  // Parents come before their children in mountinfo's order (a tree walk).
  for (size_t i = 0; i < mounts.size(); ++i) {
    const auto parent = by_id.find(mounts[i].parent_id);
    if (parent == by_id.end() || parent->second >= i) {
      path_ok[i] = true;  // the namespace's root
    } else {
      const size_t p = parent->second;
      path_ok[i] = mounts[p].mount_point == mounts[i].mount_point ? path_ok[p] : reachable[p];
    }
    reachable[i] = !covered[i] && path_ok[i];
  }
  return reachable;
}

// Lower is better: reachable first, then showing the whole filesystem.
int Rank(const Mount& m, bool reachable) { return (reachable ? 0 : 2) + (m.root == "/" ? 0 : 1); }

}  // namespace

Result<FilesystemFilter> MakeFilesystemFilter(const std::string& fs_types_include,
                                              const std::string& fs_types_exclude,
                                              const std::string& mount_points_include,
                                              const std::string& mount_points_exclude) {
  auto fs_types = DeviceFilter::Create(fs_types_include, fs_types_exclude);
  if (!fs_types) return ErrorOf(fs_types);
  auto mount_points = DeviceFilter::Create(mount_points_include, mount_points_exclude);
  if (!mount_points) return ErrorOf(mount_points);
  return FilesystemFilter{std::move(*fs_types), std::move(*mount_points)};
}

FilesystemFilter DefaultFilesystemFilter() {
  // The constants compile: a failure is a bug of this file.
  return *MakeFilesystemFilter("", kDefaultFsTypesExclude, "", kDefaultMountPointsExclude);
}

std::vector<FilesystemMount> SelectFilesystems(const std::vector<Mount>& mounts,
                                               const FilesystemFilter& filter) {
  const std::vector<bool> reachable = Reachable(mounts);
  std::map<std::pair<uint32_t, uint32_t>, size_t> chosen;  // device -> index into out
  std::vector<FilesystemMount> out;
  for (size_t i = 0; i < mounts.size(); ++i) {
    const Mount& m = mounts[i];
    if (!filter.Matches(m)) continue;
    const auto [it, inserted] = chosen.try_emplace({m.major, m.minor}, out.size());
    if (inserted) {
      out.push_back({m, reachable[i]});
    } else if (Rank(m, reachable[i]) < Rank(out[it->second].mount, out[it->second].reachable)) {
      out[it->second] = {m, reachable[i]};
    }
  }
  return out;
}

}  // namespace iowatch::collectors
