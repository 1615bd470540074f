// The iostat derivations: every column of sysstat 12.6's `iostat` and
// `iostat -x` for one device, and the avg-cpu line, as pure functions of two
// samples and the interval between them.
//
// The arithmetic follows sysstat's own (iostat.c, common.c, rd_stats.c) in
// order and types, so that printing with "%.2f" gives the same digits:
// rates are delta / interval_cs * 100, the *_ms tick fields are subtracted as
// 32-bit unsigned values (the kernel prints them with %u, so a wrap yields the
// right small delta), and a ratio with a zero denominator is 0.
//
// A device removed and re-added under the same name is detected as sysstat
// 12.6 does (fewer I/Os in total, no sector count still growing) and measured
// from zero. Where iowatch deliberately differs from 12.6: any 64-bit count
// that still goes backwards makes the whole interval read as zero and sets
// `counters_reset`, as sysstat >= 12.7.3 does, where 12.6 prints rates near
// 2^64.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "collectors/disk/diskstats.h"
#include "collectors/vm/proc_stat.h"

namespace iowatch::collectors {

// The kernel's millisecond fields are 32-bit: subtracting modulo 2^32 turns a
// wrap into the right small delta, exactly as sysstat's unsigned int fields do.
uint64_t TickDelta(uint64_t prev, uint64_t cur);
// Whether a 64-bit count went backwards (the device was removed and re-added,
// or reset): no difference of the two is meaningful then.
bool WentBackwards(const DiskCounters& prev, const DiskCounters& cur);

struct IostatRow {
  double reads_per_s = 0, writes_per_s = 0, discards_per_s = 0, flushes_per_s = 0;
  double transfers_per_s = 0;  // "tps": reads + writes + discards per second (flushes excluded)
  double read_sectors_per_s = 0, write_sectors_per_s = 0, discard_sectors_per_s = 0;
  double read_merges_per_s = 0, write_merges_per_s = 0, discard_merges_per_s = 0;
  double read_merge_pct = 0, write_merge_pct = 0, discard_merge_pct = 0;  // %rrqm ...
  double read_await_ms = 0, write_await_ms = 0, discard_await_ms = 0, flush_await_ms = 0;
  double read_request_sectors = 0, write_request_sectors = 0, discard_request_sectors = 0;
  double queue_size = 0;  // aqu-sz: average number of requests in flight
  double util_pct = 0;    // %util: percent of the interval with I/O in flight (not capped)
  // Totals over the interval, for the basic report's kB_read/kB_wrtn/kB_dscd.
  uint64_t read_sectors = 0, write_sectors = 0, discard_sectors = 0;
  bool counters_reset = false;
};

// `prev` is all zeros for the since-boot report. `interval_cs` is the uptime
// difference in centiseconds; 0 is treated as 1, as sysstat does.
IostatRow ComputeIostat(const DiskCounters& prev, const DiskCounters& cur, uint64_t interval_cs);

// True when the device did any I/O between the samples (what `iostat -z` keeps).
bool HadActivity(const DiskCounters& prev, const DiskCounters& cur);

// True when every I/O count is zero (sysstat hides such never-used devices
// unless they are named on the command line).
bool NeverUsed(const DiskCounters& counters);

// avg-cpu, in percent of the jiffies elapsed on the "cpu" line (guest time
// stays inside %user and %nice, as in sysstat 12.6).
struct CpuUsage {
  double user = 0, nice = 0, system = 0, iowait = 0, steal = 0, idle = 0;
};

CpuUsage ComputeCpuUsage(const CpuTicks& prev, const CpuTicks& cur);

}  // namespace iowatch::collectors
