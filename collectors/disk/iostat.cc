#include "collectors/disk/iostat.h"

namespace iowatch::collectors {

uint64_t TickDelta(uint64_t prev, uint64_t cur) {
  return static_cast<uint32_t>(static_cast<uint32_t>(cur) - static_cast<uint32_t>(prev));
}

bool WentBackwards(const DiskCounters& prev, const DiskCounters& cur) {
  return cur.reads < prev.reads || cur.reads_merged < prev.reads_merged ||
         cur.read_sectors < prev.read_sectors || cur.writes < prev.writes ||
         cur.writes_merged < prev.writes_merged || cur.write_sectors < prev.write_sectors ||
         cur.discards < prev.discards || cur.discards_merged < prev.discards_merged ||
         cur.discard_sectors < prev.discard_sectors || cur.flushes < prev.flushes;
}

namespace {

// sysstat's S_VALUE: a per-second rate from a delta and an interval in 1/100 s.
double PerSecond(uint64_t delta, uint64_t interval_cs) {
  return static_cast<double>(delta) / static_cast<double>(interval_cs) * 100;
}

double Average(uint64_t numerator, uint64_t count) {
  return count != 0 ? static_cast<double>(numerator) / static_cast<double>(count) : 0.0;
}

double MergePercent(uint64_t merges, uint64_t ios) {
  const uint64_t total = merges + ios;
  return total != 0 ? static_cast<double>(merges) / static_cast<double>(total) * 100 : 0.0;
}

// sysstat's test for a device that was removed and re-added under the same
// name between the samples: fewer I/Os in total and no sector count that kept
// growing. Its counters then restarted from zero within the interval.
bool WasReadded(const DiskCounters& prev, const DiskCounters& cur) {
  const uint64_t prev_ios = prev.reads + prev.writes + prev.discards + prev.flushes;
  const uint64_t cur_ios = cur.reads + cur.writes + cur.discards + cur.flushes;
  const auto restarted = [](uint64_t p, uint64_t c) { return p == 0 || c < p; };
  return cur_ios < prev_ios && restarted(prev.read_sectors, cur.read_sectors) &&
         restarted(prev.write_sectors, cur.write_sectors) &&
         restarted(prev.discard_sectors, cur.discard_sectors);
}

}  // namespace

IostatRow ComputeIostat(const DiskCounters& prev_sample, const DiskCounters& cur,
                        uint64_t interval_cs) {
  IostatRow row;
  const DiskCounters prev = WasReadded(prev_sample, cur) ? DiskCounters{} : prev_sample;
  if (WentBackwards(prev, cur)) {
    row.counters_reset = true;
    return row;
  }
  const uint64_t itv = interval_cs != 0 ? interval_cs : 1;
  const uint64_t reads = cur.reads - prev.reads;
  const uint64_t writes = cur.writes - prev.writes;
  const uint64_t discards = cur.discards - prev.discards;
  const uint64_t flushes = cur.flushes - prev.flushes;
  const uint64_t read_merges = cur.reads_merged - prev.reads_merged;
  const uint64_t write_merges = cur.writes_merged - prev.writes_merged;
  const uint64_t discard_merges = cur.discards_merged - prev.discards_merged;
  row.read_sectors = cur.read_sectors - prev.read_sectors;
  row.write_sectors = cur.write_sectors - prev.write_sectors;
  row.discard_sectors = cur.discard_sectors - prev.discard_sectors;

  row.reads_per_s = PerSecond(reads, itv);
  row.writes_per_s = PerSecond(writes, itv);
  row.discards_per_s = PerSecond(discards, itv);
  row.flushes_per_s = PerSecond(flushes, itv);
  row.transfers_per_s = PerSecond(reads + writes + discards, itv);
  row.read_sectors_per_s = PerSecond(row.read_sectors, itv);
  row.write_sectors_per_s = PerSecond(row.write_sectors, itv);
  row.discard_sectors_per_s = PerSecond(row.discard_sectors, itv);
  row.read_merges_per_s = PerSecond(read_merges, itv);
  row.write_merges_per_s = PerSecond(write_merges, itv);
  row.discard_merges_per_s = PerSecond(discard_merges, itv);
  row.read_merge_pct = MergePercent(read_merges, reads);
  row.write_merge_pct = MergePercent(write_merges, writes);
  row.discard_merge_pct = MergePercent(discard_merges, discards);
  row.read_await_ms = Average(TickDelta(prev.read_ms, cur.read_ms), reads);
  row.write_await_ms = Average(TickDelta(prev.write_ms, cur.write_ms), writes);
  row.discard_await_ms = Average(TickDelta(prev.discard_ms, cur.discard_ms), discards);
  row.flush_await_ms = Average(TickDelta(prev.flush_ms, cur.flush_ms), flushes);
  row.read_request_sectors = Average(row.read_sectors, reads);
  row.write_request_sectors = Average(row.write_sectors, writes);
  row.discard_request_sectors = Average(row.discard_sectors, discards);
  row.queue_size = PerSecond(TickDelta(prev.weighted_io_ms, cur.weighted_io_ms), itv) / 1000.0;
  row.util_pct = PerSecond(TickDelta(prev.io_ms, cur.io_ms), itv) / 10.0;
  return row;
}

bool HadActivity(const DiskCounters& prev, const DiskCounters& cur) {
  return cur.reads != prev.reads || cur.writes != prev.writes || cur.discards != prev.discards ||
         cur.flushes != prev.flushes;
}

bool NeverUsed(const DiskCounters& counters) {
  return counters.reads == 0 && counters.writes == 0 && counters.discards == 0 &&
         counters.flushes == 0;
}

CpuUsage ComputeCpuUsage(const CpuTicks& prev, const CpuTicks& cur) {
  // sysstat 12.6: the total leaves guest and guest_nice out (user and nice
  // already contain them) and %user/%nice keep them in.
  uint64_t total = TotalTicks(cur) - TotalTicks(prev);
  if (total == 0) total = 1;
  const auto pct = [total](uint64_t p, uint64_t c) {
    return c < p ? 0.0 : static_cast<double>(c - p) / static_cast<double>(total) * 100;
  };
  CpuUsage usage;
  usage.user = pct(prev.user, cur.user);
  usage.nice = pct(prev.nice, cur.nice);
  usage.system = pct(prev.system + prev.softirq + prev.irq, cur.system + cur.softirq + cur.irq);
  usage.iowait = pct(prev.iowait, cur.iowait);
  usage.steal = pct(prev.steal, cur.steal);
  usage.idle = pct(prev.idle, cur.idle);
  return usage;
}

}  // namespace iowatch::collectors
