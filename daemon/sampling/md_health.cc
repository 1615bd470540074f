#include "daemon/sampling/md_health.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace iowatch::daemon {
namespace {

using collectors::MdArray;
using collectors::MdSysfsArray;

// md/level of a container: mdadm leaves it empty for IMSM and DDF.
bool IsContainerLevel(const std::string& level) {
  return level.empty() || level == "container" || level == "imsm" || level == "ddf";
}

void FromMdstat(const MdArray& a, MdArrayHealth& h) {
  h.level = a.level;
  h.size_bytes = a.blocks.value_or(0) * 1024;
  h.active = a.active;
  h.raid_disks = a.raid_disks.value_or(0);
  if (a.raid_disks && a.in_sync_disks && *a.in_sync_disks < *a.raid_disks) {
    h.degraded = *a.raid_disks - *a.in_sync_disks;
  }
  for (const collectors::MdMember& m : a.members) {
    h.members.push_back(m.failed ? m.name + " (failed)" : m.spare ? m.name + " (spare)" : m.name);
    if (m.failed) h.failed.push_back(m.name);
  }
  if (a.sync) {
    h.sync = MdSyncHealth{std::string(NameIn<collectors::MdSyncAction>(
                              collectors::kMdSyncActionNames, a.sync->action)),
                          0, a.sync->finish_minutes * 60, a.sync->speed_kib_per_s * 1024};
    if (a.sync->total_blocks > 0) {
      h.sync->done_ratio =
          static_cast<double>(a.sync->done_blocks) / static_cast<double>(a.sync->total_blocks);
    }
  }
  if (a.sync_wait) {
    h.sync_waiting = NameIn<collectors::MdSyncWait>(collectors::kMdSyncWaitNames, *a.sync_wait);
  }
}

// sysfs's figures win where both have one: md/degraded is what the alert reads.
void FromSysfs(const MdSysfsArray& a, bool in_mdstat, MdArrayHealth& h) {
  if (a.level && h.level.empty()) h.level = *a.level;
  h.array_state = a.array_state.value_or("");
  if (!in_mdstat) h.active = h.array_state != "inactive" && h.array_state != "clear";
  const collectors::NodeMdSysfsFigures figures = collectors::NodeExporterMdSysfsFigures(a);
  h.degraded = figures.degraded;
  if (h.raid_disks == 0 && figures.raid_disks) h.raid_disks = *figures.raid_disks;
}

void Judge(MdArrayHealth& h, const MdSysfsArray* sysfs) {
  if (h.degraded > 0) {
    h.problems.push_back(
        fmt::format("degraded: {} of {} raid disks missing or failed", h.degraded, h.raid_disks));
  }
  if (!h.failed.empty()) {
    h.problems.push_back(fmt::format("member(s) marked failed (F): {}", fmt::join(h.failed, ", ")));
  }
  // A container's md/level is empty; without sysfs it cannot be told apart.
  h.container = sysfs != nullptr && IsContainerLevel(sysfs->level.value_or(""));
  if (!h.active && !h.container) {
    h.problems.emplace_back("inactive: the kernel does not run it, nothing on it can be read");
  }
}

std::string Duration(double seconds) {
  if (seconds < 60) return fmt::format("{:.0f} s", seconds);
  if (seconds < 3600) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

}  // namespace

std::vector<MdArrayHealth> BuildMdHealth(const Snapshot& s) {
  std::map<std::string, MdArrayHealth> by_name;
  for (const MdArray& a : s.md.arrays) {
    MdArrayHealth& h = by_name[a.name];
    h.name = a.name;
    FromMdstat(a, h);
  }
  std::map<std::string, const MdSysfsArray*> sysfs;
  for (const MdSysfsArray& a : s.md.sysfs_arrays) {
    const bool in_mdstat = by_name.contains(a.name);
    MdArrayHealth& h = by_name[a.name];
    h.name = a.name;
    FromSysfs(a, in_mdstat, h);
    sysfs[a.name] = &a;
  }
  std::vector<MdArrayHealth> out;
  for (auto& [name, h] : by_name) {
    const auto it = sysfs.find(name);
    Judge(h, it == sysfs.end() ? nullptr : it->second);
    out.push_back(std::move(h));
  }
  return out;
}

std::string DescribeMdState(const MdArrayHealth& a) {
  std::string out = a.active ? "active" : "inactive";
  if (!a.array_state.empty() && a.array_state != out) out += " (" + a.array_state + ")";
  if (a.degraded > 0) {
    out +=
        fmt::format(", degraded: {} of {} raid disks missing or failed", a.degraded, a.raid_disks);
  } else if (a.raid_disks > 0 && a.active) {
    out += fmt::format(", {} of {} raid disks", a.raid_disks, a.raid_disks);
  }
  return out;
}

std::string DescribeMdSync(const MdArrayHealth& a) {
  if (!a.sync) return a.sync_waiting.empty() ? "" : "resync=" + a.sync_waiting;
  return fmt::format("{} {:.1f} % done, {} left at {:.1f} MiB/s", a.sync->action,
                     a.sync->done_ratio * 100, Duration(a.sync->remaining_seconds),
                     static_cast<double>(a.sync->speed_bytes_per_second) / (1024 * 1024));
}

}  // namespace iowatch::daemon
