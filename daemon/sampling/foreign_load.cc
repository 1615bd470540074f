#include "daemon/sampling/foreign_load.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace iowatch::daemon {
namespace {

bool IsAncestor(std::string_view parent, std::string_view child) {
  return child.size() > parent.size() && child.starts_with(parent) && child[parent.size()] == '/';
}

}  // namespace

std::string NameForeignLoad(const Snapshot& snapshot, uint32_t major, uint32_t minor,
                            std::string_view own_cgroup, size_t top) {
  const auto& devices = *snapshot.block_devices;
  const auto disk = std::ranges::find_if(devices, [&](const collectors::BlockDevice& d) {
    return d.major == major && d.minor == minor;
  });
  if (disk == devices.end()) return {};
  std::vector<const CgroupSeries*> on_disk;
  for (const CgroupSeries& s : snapshot.cgroups.series) {
    if (s.device == disk->name && s.has_rates) on_disk.push_back(&s);
  }
  std::vector<std::pair<double, const CgroupSeries*>> leaves;
  for (const CgroupSeries* s : on_disk) {
    if (s->cgroup == own_cgroup || IsAncestor(s->cgroup, own_cgroup)) continue;
    const bool has_child = std::ranges::any_of(
        on_disk, [&](const CgroupSeries* o) { return IsAncestor(s->cgroup, o->cgroup); });
    const double peak = s->window_max[0] + s->window_max[1];  // read + write bytes/s
    if (!has_child && peak > 0) leaves.emplace_back(peak, s);
  }
  std::ranges::stable_sort(leaves, std::greater<>(),
                           &std::pair<double, const CgroupSeries*>::first);
  std::string out;
  for (size_t i = 0; i < std::min(top, leaves.size()); ++i) {
    const CgroupSeries& s = *leaves[i].second;
    out += fmt::format("{}{} up to {:.1f} MB/s", out.empty() ? "" : ", ",
                       s.unit.empty() ? s.cgroup : s.unit, leaves[i].first / 1e6);
  }
  if (out.empty()) return out;
  return fmt::format("in the last {:.0f} s: {}", snapshot.window_seconds, out);
}

}  // namespace iowatch::daemon
