#include "cli/iostat/iostat_report.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace iowatch::daemon {
namespace {

using collectors::BlockTopology;
using collectors::DiskCounters;
using collectors::DiskSample;
using collectors::DiskStat;

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
    if (sel.hide_never_used && collectors::NeverUsed(c)) continue;
    const auto found = previous.find(disk.name);
    const DiskCounters& p = found != previous.end() ? *found->second : zero;
    if (sel.omit_inactive && !collectors::HadActivity(p, c)) continue;
    rows.push_back(IostatDeviceRow{disk.name, collectors::ComputeIostat(p, c, interval_cs)});
  }
  if (sel.set != DeviceSet::kAllLines) std::sort(rows.begin(), rows.end(), ByStrcmp);
  return rows;
}

}  // namespace iowatch::daemon
