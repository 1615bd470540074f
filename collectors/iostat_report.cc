#include "collectors/iostat_report.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace iowatch::collectors {
namespace {

// sysfs spells a '/' in a kernel device name as '!' ("cciss!c0d0").
std::string KernelName(std::string sysfs_name) {
  std::replace(sysfs_name.begin(), sysfs_name.end(), '!', '/');
  return sysfs_name;
}

bool ByStrcmp(const IostatDeviceRow& a, const IostatDeviceRow& b) {
  return std::strcmp(a.name.c_str(), b.name.c_str()) < 0;
}

// Which names the report may show; empty optional means "every disk".
std::set<std::string> WantedNames(const BlockTopology& topology, const IostatSelection& sel) {
  std::set<std::string> wanted;
  for (const std::string& given : sel.names) {
    std::string name = given;
    for (const auto& [kernel, dm] : topology.dm_names) {
      if (dm == given) name = kernel;  // "-N vg0-root" selects dm-0
    }
    wanted.insert(name);
    if (sel.set == DeviceSet::kPartitionsOfNamed) {
      const auto parts = topology.partitions.find(name);
      if (parts != topology.partitions.end())
        wanted.insert(parts->second.begin(), parts->second.end());
    }
  }
  return wanted;
}

}  // namespace

Result<BlockTopology> ReadBlockTopology(const FileTree& sysfs) {
  auto entries = sysfs.List("block");
  if (!entries) return std::unexpected(entries.error());
  BlockTopology topology;
  for (const std::string& entry : *entries) {
    const std::string disk = KernelName(entry);
    topology.disks.insert(disk);
    auto& parts = topology.partitions[disk];
    for (const std::string& child :
         sysfs.List("block/" + entry).value_or(std::vector<std::string>())) {
      // The kernel names partitions after their disk ("sda1", "nvme0n1p1"); checking
      // only those entries spares a stat() of each of the ~30 attributes of a disk.
      if (child.starts_with(entry) && sysfs.Exists("block/" + entry + "/" + child + "/partition")) {
        parts.push_back(KernelName(child));
      }
    }
    if (auto dm = sysfs.Read("block/" + entry + "/dm/name")) {
      while (!dm->empty() && (dm->back() == '\n' || dm->back() == ' ')) dm->pop_back();
      if (!dm->empty()) topology.dm_names[disk] = *dm;
    }
  }
  return topology;
}

std::vector<IostatDeviceRow> BuildIostatRows(const DiskSample* prev, const DiskSample& cur,
                                             const BlockTopology& topology,
                                             const IostatSelection& sel) {
  std::unordered_map<std::string_view, const DiskCounters*> previous;
  if (prev != nullptr) {
    previous.reserve(prev->diskstats.disks.size());
    for (const DiskStat& d : prev->diskstats.disks) previous.emplace(d.name, &d.counters);
  }
  const DiskCounters zero;
  const uint64_t interval_cs = cur.uptime_cs - (prev != nullptr ? prev->uptime_cs : 0);
  const bool named = sel.set != DeviceSet::kAllLines && !sel.all_keyword && !sel.names.empty();
  const std::set<std::string> wanted = named ? WantedNames(topology, sel) : std::set<std::string>();

  std::vector<IostatDeviceRow> rows;
  for (const DiskStat& disk : cur.diskstats.disks) {
    const DiskCounters& c = disk.counters;
    if (sel.extended && !c.HasExtendedFields()) continue;
    if (sel.set == DeviceSet::kAllLines) {
      // every line qualifies
    } else if (named) {
      if (!wanted.contains(disk.name)) continue;
    } else if (!topology.disks.contains(disk.name)) {
      continue;
    }
    if (sel.hide_never_used && NeverUsed(c)) continue;
    const auto found = previous.find(disk.name);
    const DiskCounters& p = found != previous.end() ? *found->second : zero;
    if (sel.omit_inactive && !HadActivity(p, c)) continue;
    rows.push_back(IostatDeviceRow{disk.name, ComputeIostat(p, c, interval_cs)});
  }
  if (sel.set != DeviceSet::kAllLines) std::sort(rows.begin(), rows.end(), ByStrcmp);
  return rows;
}

}  // namespace iowatch::collectors
