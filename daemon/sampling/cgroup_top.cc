#include "daemon/sampling/cgroup_top.h"

#include <algorithm>
#include <map>

namespace iowatch::daemon {

std::vector<CgroupTopRow> CgroupTop(const Snapshot& snapshot, const std::string& device) {
  std::map<std::string, CgroupTopRow> by_cgroup;
  for (const CgroupSeries& s : snapshot.cgroups.series) {
    if (!s.has_rates || (!device.empty() && s.device != device)) continue;
    CgroupTopRow& row = by_cgroup[s.cgroup];
    row.cgroup = s.cgroup;
    row.unit = s.unit;
    row.read_bytes_per_second += s.latest[0];
    row.write_bytes_per_second += s.latest[1];
    row.reads_per_second += s.latest[2];
    row.writes_per_second += s.latest[3];
  }
  for (const CgroupPressureSeries& p : snapshot.cgroups.pressure) {
    if (auto found = by_cgroup.find(p.cgroup); found != by_cgroup.end()) {
      found->second.pressure_some_avg10 = p.pressure.some.avg10;
    }
  }
  std::vector<CgroupTopRow> rows;
  rows.reserve(by_cgroup.size());
  for (auto& [path, row] : by_cgroup) rows.push_back(std::move(row));
  // A slice and its only busy service read the same (counts include
  // descendants): the deeper one, which names the culprit, comes first.
  std::ranges::stable_sort(rows, [](const CgroupTopRow& a, const CgroupTopRow& b) {
    const double x = a.read_bytes_per_second + a.write_bytes_per_second;
    const double y = b.read_bytes_per_second + b.write_bytes_per_second;
    if (x != y) return x > y;
    return std::ranges::count(a.cgroup, '/') > std::ranges::count(b.cgroup, '/');
  });
  return rows;
}

}  // namespace iowatch::daemon
