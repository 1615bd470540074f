// The vmstat derivations: every column of procps-ng 4.0.2's `vmstat` (and the
// -a active/inactive variant) from /proc/stat, /proc/meminfo and /proc/vmstat,
// with procps' own integer arithmetic so that the printed digits agree:
//  - memory goes through procps' unitConvert, which passes values through a
//    32-bit float (exact below 2^24 KiB, rounded above);
//  - the since-boot line divides counters by the CPU jiffies of all CPUs
//    ((x * HZ + Div/2) / Div), later lines divide deltas by the nominal delay
//    ((delta + delay/2) / delay);
//  - CPU percentages are (100 * x + Div/2) / Div with guest time taken out of
//    user time after the total is formed; Div = 0 reads as 100 % idle.
// Where iowatch deliberately differs from 4.0.2: memory is re-read for every
// line (4.0.2 reads /proc/meminfo once and repeats it), and a counter that
// goes backwards yields 0 for that interval instead of a wrapped 2^32-ish rate.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "collectors/text/named_values.h"
#include "collectors/vm/meminfo.h"
#include "collectors/vm/proc_stat.h"
#include "common/file_tree.h"

namespace iowatch::collectors {

struct VmSample {
  ProcStat stat;
  NamedValues meminfo;  // KiB
  NamedValues vmstat;
};

// Reads /proc/stat, /proc/meminfo and /proc/vmstat; fails when a file cannot
// be read or /proc/stat has no cpu line.
Result<VmSample> ReadVmSample(const FileTree& procfs);

struct VmstatParams {
  uint64_t unit_bytes = 1024;  // -S: k 1000, K 1024, m 1000000, M 1048576
  uint64_t hz = 100;           // sysconf(_SC_CLK_TCK)
  uint64_t page_kib = 4;       // page size / 1024
};

struct VmstatColumns {
  uint64_t r = 0, b = 0;
  uint64_t swpd = 0, free = 0, buff = 0, cache = 0, inact = 0, active = 0;  // in the -S unit
  uint32_t si = 0, so = 0, bi = 0, bo = 0, in = 0, cs = 0;
  uint32_t us = 0, sy = 0, id = 0, wa = 0, st = 0, gu = 0;
  bool operator==(const VmstatColumns&) const = default;
};

// The first line: averages since boot.
VmstatColumns ComputeVmstatSinceBoot(const VmSample& cur, const VmstatParams& params);

// A later line: rates over the last `delay_s` seconds (procps uses the nominal
// delay, not the measured time).
VmstatColumns ComputeVmstatInterval(const VmSample& prev, const VmSample& cur, uint64_t delay_s,
                                    const VmstatParams& params);

// vmstat's columns in base units, without procps' integer rounding, for the
// daemon's metrics: same inputs, same clamped deltas, same CPU split as the
// CLI lines above, divided by the measured elapsed time.
struct VmstatRates {
  double procs_running = 0, procs_blocked = 0;
  double swap_used_bytes = 0, free_bytes = 0, buffers_bytes = 0, cache_bytes = 0;
  double inactive_bytes = 0, active_bytes = 0;
  double swap_in_bytes_per_s = 0, swap_out_bytes_per_s = 0;  // si, so
  double io_in_bytes_per_s = 0, io_out_bytes_per_s = 0;      // bi, bo
  double interrupts_per_s = 0, context_switches_per_s = 0;   // in, cs
  double user_ratio = 0, system_ratio = 0, idle_ratio = 0, iowait_ratio = 0, steal_ratio = 0,
         guest_ratio = 0;  // us sy id wa st gu, 0..1
};

VmstatRates ComputeVmstatRates(const VmSample& prev, const VmSample& cur, double elapsed_s,
                               uint64_t page_bytes);

// procps' unitConvert: KiB -> the -S unit, through a 32-bit float.
uint64_t ConvertKib(uint64_t kib, uint64_t unit_bytes);

}  // namespace iowatch::collectors
