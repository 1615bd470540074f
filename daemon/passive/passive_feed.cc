#include "daemon/passive/passive_feed.h"

#include <algorithm>
#include <cmath>

#include "collectors/disk/iostat.h"

namespace iowatch::daemon {
namespace {

using collectors::bpf::BlockOp;
using collectors::bpf::SizeClass;

constexpr BlockOp kOps[2] = {BlockOp::kRead, BlockOp::kWrite};
constexpr uint64_t kSectorBytes = 512;

struct OpCounters {
  uint64_t ios = 0;
  uint64_t ms = 0;
  uint64_t sectors = 0;
};

OpCounters OpOf(const collectors::DiskCounters& c, size_t op) {
  return op == 0 ? OpCounters{c.reads, c.read_ms, c.read_sectors}
                 : OpCounters{c.writes, c.write_ms, c.write_sectors};
}

double Share(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0 : static_cast<double>(part) / static_cast<double>(whole);
}

double PerSecond(double amount, double seconds) { return seconds > 0 ? amount / seconds : 0; }

// The share of `seconds` a millisecond tick counter grew by (32-bit: TickDelta).
double TickShare(uint64_t before, uint64_t after, double seconds) {
  return PerSecond(static_cast<double>(collectors::TickDelta(before, after)) / 1000.0, seconds);
}

}  // namespace

PassiveFeed::Mark PassiveFeed::MarkOf(const Snapshot& snapshot, int64_t index) const {
  Mark mark;
  mark.index = index;
  mark.wall_ms = std::llround(snapshot.timestamp_seconds * 1000);
  mark.monotonic_seconds = snapshot.monotonic_seconds;
  if (snapshot.stat) mark.cpu = snapshot.stat->total;
  for (const DeviceSnapshot& d : snapshot.devices) mark.disks[d.name].counters = d.counters;
  for (const BlockClassSeries& s : snapshot.block_io.device_classes) {
    if (s.op != BlockOp::kRead && s.op != BlockOp::kWrite) continue;
    const auto it = mark.disks.find(s.device);
    if (it != mark.disks.end()) it->second.classes[s.op == BlockOp::kRead ? 0 : 1] = s.classes;
  }
  return mark;
}

std::vector<probes::PassiveWindow> PassiveFeed::Add(const Snapshot& snapshot,
                                                    std::span<const std::string> probing) {
  const auto index = static_cast<int64_t>(
      std::floor(snapshot.timestamp_seconds * 1000 / static_cast<double>(options_.window_ms)));
  std::vector<probes::PassiveWindow> out;
  if (!open_ || index < open_->index) {  // the first sample, or the wall clock went back
    open_ = MarkOf(snapshot, index);
    return out;
  }
  for (const DeviceSnapshot& d : snapshot.devices) {
    const auto it = open_->disks.find(d.name);
    if (it == open_->disks.end()) continue;
    it->second.counters_reset |= d.counters_reset;
    it->second.probe |= std::ranges::find(probing, d.name) != probing.end();
  }
  if (index == open_->index) return out;
  Mark next = MarkOf(snapshot, index);
  Close(*open_, next, out);
  open_ = std::move(next);
  return out;
}

probes::PassiveWindow PassiveFeed::DiskWindow(const std::string& name, const DiskMark& before,
                                              const DiskMark& after, const Mark& from,
                                              const Mark& to) {
  const double seconds = to.monotonic_seconds - from.monotonic_seconds;
  probes::PassiveWindow base;
  base.device = name;
  base.size = "all";
  base.start_ms = from.wall_ms;
  base.end_ms = to.wall_ms;
  if (from.cpu && to.cpu && collectors::TotalTicks(*to.cpu) > collectors::TotalTicks(*from.cpu)) {
    base.steal = Share(to.cpu->steal - std::min(to.cpu->steal, from.cpu->steal),
                       collectors::TotalTicks(*to.cpu) - collectors::TotalTicks(*from.cpu));
  }
  base.probe = before.probe;
  base.counters_reset = before.counters_reset || after.counters_reset ||
                        collectors::WentBackwards(before.counters, after.counters);
  if (!base.counters_reset) {
    base.queue_depth =
        TickShare(before.counters.weighted_io_ms, after.counters.weighted_io_ms, seconds);
    base.utilization = TickShare(before.counters.io_ms, after.counters.io_ms, seconds);
  }
  return base;
}

void PassiveFeed::OpWindows(probes::PassiveWindow w, const DiskMark& before, const DiskMark& after,
                            size_t op, double seconds,
                            std::vector<probes::PassiveWindow>& out) const {
  const bool reset = w.counters_reset;
  const OpCounters b = OpOf(before.counters, op);
  const OpCounters a = OpOf(after.counters, op);
  w.op = collectors::bpf::ToString(kOps[op]);
  const uint64_t sectors = reset ? 0 : a.sectors - b.sectors;
  if (!reset) {
    const uint64_t other =
        OpOf(after.counters, 1 - op).sectors - OpOf(before.counters, 1 - op).sectors;
    w.other_bytes_rate = PerSecond(static_cast<double>(other * kSectorBytes), seconds);
  }
  if (DeviceClassWindows(w, before, after, op, seconds, out) && !options_.shadow_diskstats) return;
  w.source = probes::PassiveSource::kDiskstats;
  if (!reset) {
    w.requests = a.ios - b.ios;
    if (w.requests > 0) {
      w.mean_seconds = TickShare(b.ms, a.ms, 1.0) / static_cast<double>(w.requests);
      w.mean_bytes = static_cast<double>(sectors * kSectorBytes) / static_cast<double>(w.requests);
    }
    w.rate = PerSecond(static_cast<double>(w.requests), seconds);
  }
  out.push_back(std::move(w));
}

bool PassiveFeed::DeviceClassWindows(const probes::PassiveWindow& w, const DiskMark& before,
                                     const DiskMark& after, size_t op, double seconds,
                                     std::vector<probes::PassiveWindow>& out) {
  const std::optional<collectors::bpf::SizeClasses>& b = before.classes[op];
  const std::optional<collectors::bpf::SizeClasses>& a = after.classes[op];
  if (!b || !a) return false;
  for (size_t c = 0; c < collectors::bpf::kSizeClasses; ++c) {
    const collectors::bpf::SizeClassStats& x = (*b)[c];
    const collectors::bpf::SizeClassStats& y = (*a)[c];
    // The program was reloaded: its counters restarted.
    if (y.count < x.count || y.sum_ns < x.sum_ns || y.bytes < x.bytes) return false;
  }
  for (size_t c = 0; c < collectors::bpf::kSizeClasses; ++c) {
    probes::PassiveWindow d = w;
    d.source = probes::PassiveSource::kDevice;
    d.size = collectors::bpf::ToString(static_cast<SizeClass>(c));
    d.requests = (*a)[c].count - (*b)[c].count;
    if (d.requests > 0) {
      const auto n = static_cast<double>(d.requests);
      d.mean_seconds = static_cast<double>((*a)[c].sum_ns - (*b)[c].sum_ns) / 1e9 / n;
      d.mean_bytes = static_cast<double>((*a)[c].bytes - (*b)[c].bytes) / n;
    }
    d.rate = PerSecond(static_cast<double>(d.requests), seconds);
    out.push_back(std::move(d));
  }
  return true;
}

void PassiveFeed::Close(const Mark& from, const Mark& to,
                        std::vector<probes::PassiveWindow>& out) const {
  const double seconds = to.monotonic_seconds - from.monotonic_seconds;
  if (seconds <= 0) return;
  for (const auto& [name, before] : from.disks) {
    const auto after = to.disks.find(name);
    if (after == to.disks.end()) continue;
    const probes::PassiveWindow base = DiskWindow(name, before, after->second, from, to);
    for (size_t op = 0; op < 2; ++op) OpWindows(base, before, after->second, op, seconds, out);
  }
}

}  // namespace iowatch::daemon
