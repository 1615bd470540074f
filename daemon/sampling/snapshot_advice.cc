#include "daemon/sampling/snapshot_advice.h"

#include <algorithm>

namespace iowatch::daemon {
namespace {

collectors::ObservedSizes SinceBoot(const Snapshot& s, const std::string& name) {
  const auto it = std::ranges::find(s.devices, name, &DeviceSnapshot::name);
  if (it == s.devices.end()) return {"diskstats since boot", 0, 0, 0, 0, {}, {}};
  return collectors::ObserveSizes({}, it->counters, "diskstats since boot");
}

}  // namespace

std::vector<collectors::AdviceFinding> SnapshotAdvice(const Snapshot& s) {
  std::vector<collectors::AdviceFinding> findings;
  for (const collectors::BlockDevice& disk : *s.block_devices) {
    if (disk.is_partition) continue;
    collectors::DeviceFacts facts;
    facts.disk = disk;
    for (const collectors::BlockDevice& p : *s.block_devices) {
      if (p.is_partition && p.parent == disk.name) facts.partitions.push_back({p, std::nullopt});
    }
    facts.observed = SinceBoot(s, disk.name);
    for (collectors::AdviceFinding& f : collectors::Advise(facts)) findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace iowatch::daemon
