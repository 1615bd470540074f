#include "daemon/sampling/snapshot_advice.h"

#include <string_view>
#include <unordered_map>

namespace iowatch::daemon {
namespace {

// One pass to index partitions by disk and counters by name: a scrape of
// 10,000 disks must not pay 10,000² comparisons (e2e.serve_scale).
std::vector<collectors::AdviceFinding> ComputeAdvice(const Snapshot& s) {
  std::unordered_map<std::string_view, std::vector<const collectors::BlockDevice*>> partitions;
  for (const collectors::BlockDevice& p : *s.block_devices) {
    if (p.is_partition) partitions[p.parent].push_back(&p);
  }
  std::unordered_map<std::string_view, const collectors::DiskCounters*> counters;
  for (const DeviceSnapshot& d : s.devices) counters.emplace(d.name, &d.counters);
  std::vector<collectors::AdviceFinding> findings;
  for (const collectors::BlockDevice& disk : *s.block_devices) {
    if (disk.is_partition) continue;
    collectors::DeviceFacts facts;
    facts.disk = disk;
    if (const auto it = partitions.find(disk.name); it != partitions.end()) {
      for (const collectors::BlockDevice* p : it->second) facts.partitions.push_back({*p, {}});
    }
    const auto c = counters.find(disk.name);
    facts.observed = collectors::ObserveSizes(
        {}, c == counters.end() ? collectors::DiskCounters{} : *c->second, "diskstats since boot");
    for (collectors::AdviceFinding& f : collectors::Advise(facts)) findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace

const std::vector<collectors::AdviceFinding>& SnapshotAdvice(const Snapshot& s) {
  return s.advice.Get([&s] { return ComputeAdvice(s); });
}

}  // namespace iowatch::daemon
