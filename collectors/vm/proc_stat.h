// Parser for /proc/stat (proc(5)): the aggregate and per-CPU time lines in
// USER_HZ ticks, the interrupt total, context switches, forks and the running
// and blocked process counts. Older kernels print fewer CPU columns (iowait
// since 2.5.41, irq/softirq 2.6.0, steal 2.6.11, guest 2.6.24, guest_nice
// 2.6.33); missing ones read as 0.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch::collectors {

struct CpuTicks {
  uint64_t user = 0;  // includes guest, as the kernel accounts it
  uint64_t nice = 0;  // includes guest_nice
  uint64_t system = 0;
  uint64_t idle = 0;
  uint64_t iowait = 0;
  uint64_t irq = 0;
  uint64_t softirq = 0;
  uint64_t steal = 0;
  uint64_t guest = 0;
  uint64_t guest_nice = 0;
  bool operator==(const CpuTicks&) const = default;
};

struct ProcStat {
  CpuTicks total;                 // the "cpu" line
  std::vector<CpuTicks> per_cpu;  // "cpuN" lines, indexed by N (gaps for offline CPUs are zero)
  uint64_t interrupts = 0;        // first number of "intr"
  uint64_t context_switches = 0;  // "ctxt"
  uint64_t boot_time = 0;         // "btime", seconds since the epoch
  uint64_t forks = 0;             // "processes"
  uint64_t procs_running = 0;
  uint64_t procs_blocked = 0;
};

// All the CPU time the ticks account for: guest and guest_nice are left out,
// being already inside user and nice (sysstat's total, the kernel's own).
inline uint64_t TotalTicks(const CpuTicks& t) {
  return t.user + t.nice + t.system + t.idle + t.iowait + t.irq + t.softirq + t.steal;
}

// Fails only when the "cpu" line is missing or malformed; unknown lines are ignored.
Result<ProcStat> ParseProcStat(std::string_view text, std::string_view path);

}  // namespace iowatch::collectors
