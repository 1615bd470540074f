#include "daemon/sampling/snapshot_advice.h"

#include <string_view>
#include <unordered_map>
#include <utility>

namespace iowatch::daemon {
namespace {

using collectors::bpf::BlockOp;
using collectors::bpf::RequestStats;

// A disk's read and write request statistics from the block_io source's BPF program.
using DiskRequests = std::pair<const RequestStats*, const RequestStats*>;

double Average(uint64_t bytes, uint64_t requests) {
  return requests > 0 ? static_cast<double>(bytes) / static_cast<double>(requests) : 0.0;
}

// What the BPF program saw since it was loaded: the exact average sizes,
// the share of writes below the full stripe (at least: the size slot that
// holds the full stripe also holds smaller writes, and is not counted) and
// the share not aligned to the disk's alignment unit (the stripe's unit).
advice::ObservedSizes ObserveRequests(const collectors::BlockDevice& disk,
                                      const DiskRequests& requests) {
  static const RequestStats kNone;
  const RequestStats& reads = requests.first != nullptr ? *requests.first : kNone;
  const RequestStats& writes = requests.second != nullptr ? *requests.second : kNone;
  advice::ObservedSizes o;
  o.source = "BPF histograms since the collector was loaded";
  o.reads = reads.requests;
  o.writes = writes.requests;
  o.average_read_bytes = Average(reads.bytes, reads.requests);
  o.average_write_bytes = Average(writes.bytes, writes.requests);
  const auto stripe = advice::StripeOf(disk);
  if (stripe && writes.requests > 0) {
    uint64_t below = 0;
    for (size_t slot = 0; slot < writes.size_slots.size(); ++slot) {
      const auto upper = collectors::bpf::SizeSlotUpperBytes(slot);
      if (upper && *upper < stripe->full_stripe) below += writes.size_slots[slot];
    }
    o.writes_below_full_stripe = static_cast<double>(below) / static_cast<double>(writes.requests);
  }
  if (const uint64_t counted = writes.aligned + writes.unaligned; counted > 0) {
    o.writes_unaligned = static_cast<double>(writes.unaligned) / static_cast<double>(counted);
  }
  return o;
}

// One pass to index partitions by disk, counters and BPF requests by name: a
// scrape of 10,000 disks must not pay 10,000² comparisons (e2e.serve_scale).
std::vector<advice::AdviceFinding> ComputeAdvice(const Snapshot& s) {
  std::unordered_map<std::string_view, std::vector<const collectors::BlockDevice*>> partitions;
  for (const collectors::BlockDevice& p : *s.block_devices) {
    if (p.is_partition) partitions[p.parent].push_back(&p);
  }
  std::unordered_map<std::string_view, const collectors::DiskCounters*> counters;
  for (const DeviceSnapshot& d : s.devices) counters.emplace(d.name, &d.counters);
  std::unordered_map<std::string_view, DiskRequests> requests;
  for (const BlockRequestSeries& r : s.block_io.requests) {
    if (r.op == BlockOp::kRead) requests[r.device].first = &r.stats;
    if (r.op == BlockOp::kWrite) requests[r.device].second = &r.stats;
  }
  std::vector<advice::AdviceFinding> findings;
  for (const collectors::BlockDevice& disk : *s.block_devices) {
    if (disk.is_partition) continue;
    advice::DeviceFacts facts;
    facts.disk = disk;
    if (const auto it = partitions.find(disk.name); it != partitions.end()) {
      for (const collectors::BlockDevice* p : it->second) facts.partitions.push_back({*p, {}});
    }
    if (const auto r = requests.find(disk.name); r != requests.end()) {
      facts.observed = ObserveRequests(disk, r->second);
    } else {
      const auto c = counters.find(disk.name);
      facts.observed =
          advice::ObserveSizes({}, c == counters.end() ? collectors::DiskCounters{} : *c->second,
                               "diskstats since boot");
    }
    for (advice::AdviceFinding& f : advice::Advise(facts)) findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace

const std::vector<advice::AdviceFinding>& SnapshotAdvice(const Snapshot& s) {
  return s.advice.Get([&s] { return ComputeAdvice(s); });
}

}  // namespace iowatch::daemon
