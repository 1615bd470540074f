#include "collectors/filesystem/filesystem_mounts.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <ranges>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "common/utf8.h"

namespace iowatch::collectors {
namespace {

// The path one component up: "/data/x" -> "/data", "/data" -> "/".
std::string_view ParentPath(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string_view::npos ? std::string_view("/")
                                                       : path.substr(0, slash);
}

// Whether each mount is what a lookup of its mount point finds, decided on
// the mount tree (each mount's parent, mountinfo's field 2), never on the
// file's order (`mount --move` lists a mount before its parent). A lookup
// of P reaches mount M, attached to parent Q, when Q is itself reached (or M
// is stacked on Q at Q's own mount point: then whatever reaches Q's place
// reaches M's), no other mount of Q sits on a directory between Q's mount
// point and P (a tmpfs on /data hides /data/x mounted before it), and
// nothing is stacked on M at P. A mount whose parent is not in the table is
// the namespace's (or the chroot's) root.
class Reachability {
 public:
  explicit Reachability(const std::vector<Mount>& mounts)
      : mounts_(mounts), state_(mounts.size(), kUnknown) {
    for (size_t i = 0; i < mounts.size(); ++i) {
      by_id_.emplace(mounts[i].id, i);
      if (mounts[i].parent_id == mounts[i].id) continue;  // a root naming itself its parent
      children_.emplace(mounts[i].parent_id, std::string_view(mounts[i].mount_point));
    }
  }

  std::vector<bool> All() {
    std::vector<bool> out(mounts_.size());
    for (size_t i = 0; i < mounts_.size(); ++i) out[i] = Resolve(i) == kReached;
    return out;
  }

 private:
  // kReached: found by its lookup; kPassed: its place is reached but a mount
  // stacked on it answers instead (what is stacked on it may be reached).
  enum State : uint8_t { kUnknown, kVisiting, kReached, kPassed, kHidden };

  std::optional<size_t> ParentOf(size_t i) const {
    const auto it = by_id_.find(mounts_[i].parent_id);
    if (it == by_id_.end() || it->second == i) return std::nullopt;
    return it->second;
  }

  bool HasChildAt(size_t parent, std::string_view path) const {
    return children_.contains({mounts_[parent].id, path});
  }

  // Walks up to the first resolved ancestor (iteratively: a stack of
  // thousands of mounts on one point is a chain that deep), then resolves
  // the chain downwards.
  State Resolve(size_t i) {
    std::vector<size_t> chain;
    for (std::optional<size_t> j = i; j && state_[*j] == kUnknown; j = ParentOf(*j)) {
      state_[*j] = kVisiting;
      chain.push_back(*j);
    }
    for (const size_t j : std::views::reverse(chain)) state_[j] = Decide(j);
    return state_[i];
  }

  State Decide(size_t i) const {
    const Mount& m = mounts_[i];
    const State own = HasChildAt(i, m.mount_point) ? kPassed : kReached;
    const std::optional<size_t> parent = ParentOf(i);
    // A root, or a cycle (a table read while it changed): its own place is reached.
    if (!parent || state_[*parent] == kVisiting) return own;
    const Mount& q = mounts_[*parent];
    if (q.mount_point == m.mount_point) return state_[*parent] == kHidden ? kHidden : own;
    if (state_[*parent] != kReached) return kHidden;
    for (std::string_view dir = ParentPath(m.mount_point); dir.size() > q.mount_point.size();
         dir = ParentPath(dir)) {
      if (HasChildAt(*parent, dir)) return kHidden;
    }
    return own;
  }

  const std::vector<Mount>& mounts_;
  std::unordered_map<uint32_t, size_t> by_id_;
  std::set<std::pair<uint32_t, std::string_view>> children_;  // (parent id, mount point)
  std::vector<State> state_;
};

// Lower is better: reachable first, then showing the whole filesystem.
int Rank(const Mount& m, bool reachable) { return (reachable ? 0 : 2) + (m.root == "/" ? 0 : 1); }

// Two filesystems can share device, fstype and mount point (two tmpfs
// stacked on one directory): one series each would be the same label set
// twice, a scrape Prometheus rejects. Only one of them is what the mount
// point shows: the reachable one is kept (else the first).
std::vector<FilesystemMount> OnePerLabelSet(std::vector<FilesystemMount> selected) {
  std::map<std::tuple<std::string_view, std::string_view, std::string_view>, size_t> seen;
  std::vector<bool> dropped(selected.size(), false);
  for (size_t i = 0; i < selected.size(); ++i) {
    const Mount& m = selected[i].mount;
    const auto [it, inserted] = seen.try_emplace({m.source, m.fstype, m.mount_point}, i);
    if (inserted) continue;
    const bool replace = selected[i].reachable && !selected[it->second].reachable;
    dropped[replace ? it->second : i] = true;
    if (replace) it->second = i;
  }
  std::vector<FilesystemMount> out;
  out.reserve(selected.size());
  for (size_t i = 0; i < selected.size(); ++i) {
    if (!dropped[i]) out.push_back(std::move(selected[i]));
  }
  return out;
}

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

std::vector<FilesystemMount> SelectFilesystems(std::vector<Mount> mounts,
                                               const FilesystemFilter& filter) {
  const std::vector<bool> reachable = Reachability(mounts).All();
  std::map<std::pair<uint32_t, uint32_t>, size_t> chosen;  // device -> index into out
  std::vector<FilesystemMount> out;
  out.reserve(mounts.size());  // grown by doubling, 36,000 mounts were copied twice over
  for (size_t i = 0; i < mounts.size(); ++i) {
    Mount& m = mounts[i];
    if (!filter.Matches(m)) continue;
    const auto [it, inserted] = chosen.try_emplace({m.major, m.minor}, out.size());
    if (inserted) {
      out.push_back({std::move(m), reachable[i]});
    } else if (Rank(m, reachable[i]) < Rank(out[it->second].mount, out[it->second].reachable)) {
      out[it->second] = {std::move(m), reachable[i]};
    }
  }
  return OnePerLabelSet(std::move(out));
}

std::string MountLabel(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size();) {
    const size_t valid = raw[i] == '\\' ? 0 : Utf8SequenceLength(raw, i);
    if (valid > 0) {
      out.append(raw.substr(i, valid));
      i += valid;
      continue;
    }
    const auto byte = static_cast<unsigned char>(raw[i++]);
    out += fmt::format("\\{:03o}", byte);
  }
  return out;
}

}  // namespace iowatch::collectors
