#include "collectors/vm/vmstat.h"

#include "collectors/vm/proc_vmstat.h"

namespace iowatch::collectors {
namespace {

// Jiffies split the way vmstat shows them.
struct CpuSplit {
  uint64_t use = 0, sys = 0, idl = 0, iow = 0, sto = 0, gue = 0;
};

CpuSplit SplitTicks(const CpuTicks& t) {
  return {t.user + t.nice, t.system + t.irq + t.softirq, t.idle, t.iowait,
          t.steal,         t.guest + t.guest_nice};
}

// Per-field deltas clamped at zero, as libproc2 computes them.
CpuTicks ClampedDelta(const CpuTicks& p, const CpuTicks& c) {
  const auto d = [](uint64_t a, uint64_t b) { return b > a ? b - a : 0; };
  return {d(p.user, c.user),       d(p.nice, c.nice),
          d(p.system, c.system),   d(p.idle, c.idle),
          d(p.iowait, c.iowait),   d(p.irq, c.irq),
          d(p.softirq, c.softirq), d(p.steal, c.steal),
          d(p.guest, c.guest),     d(p.guest_nice, c.guest_nice)};
}

// Fills us..gu from jiffies and returns Div, the total the rates divide by.
uint64_t FillCpu(CpuSplit cpu, VmstatColumns& out) {
  uint64_t div = cpu.use + cpu.sys + cpu.idl + cpu.iow + cpu.sto;
  if (div == 0) {
    div = 1;
    cpu.idl = 1;
  }
  const uint64_t half = div / 2;
  cpu.use = cpu.use >= cpu.gue ? cpu.use - cpu.gue : 0;  // guest is inside user time
  const auto pct = [&](uint64_t x) { return static_cast<uint32_t>((100 * x + half) / div); };
  out.us = pct(cpu.use);
  out.sy = pct(cpu.sys);
  out.id = pct(cpu.idl);
  out.wa = pct(cpu.iow);
  out.st = pct(cpu.sto);
  out.gu = pct(cpu.gue);
  return div;
}

void FillMemory(const VmSample& s, const VmstatParams& p, VmstatColumns& out) {
  const NamedValues& m = s.meminfo;
  const uint64_t swap_total = m.GetOr("SwapTotal", 0);
  const uint64_t swap_free = m.GetOr("SwapFree", 0);
  out.r = s.stat.procs_running;
  out.b = s.stat.procs_blocked;
  out.swpd = ConvertKib(swap_free < swap_total ? swap_total - swap_free : 0, p.unit_bytes);
  out.free = ConvertKib(m.GetOr("MemFree", 0), p.unit_bytes);
  out.buff = ConvertKib(m.GetOr("Buffers", 0), p.unit_bytes);
  out.cache = ConvertKib(m.GetOr("Cached", 0) + m.GetOr("SReclaimable", 0), p.unit_bytes);
  out.inact = ConvertKib(m.GetOr("Inactive", 0), p.unit_bytes);
  out.active = ConvertKib(m.GetOr("Active", 0), p.unit_bytes);
}

uint64_t Delta(uint64_t prev, uint64_t cur) { return cur >= prev ? cur - prev : 0; }

}  // namespace

uint64_t ConvertKib(uint64_t kib, uint64_t unit_bytes) {
  // procps: (unsigned long)((float)size / dataUnit * 1024), all in float.
  float value = static_cast<float>(kib) / static_cast<float>(unit_bytes);
  value = value * 1024.0f;
  if (!(value < 18446744073709551616.0f)) return 0;  // what the x86-64 conversion yields
  return static_cast<uint64_t>(value);
}

Result<VmSample> ReadVmSample(const FileTree& procfs) {
  VmSample sample;
  auto stat_text = procfs.Read("stat");
  if (!stat_text) return ErrorOf(stat_text);
  auto stat = ParseProcStat(*stat_text, procfs.PathOf("stat").string());
  if (!stat) return ErrorOf(stat);
  sample.stat = std::move(*stat);
  auto meminfo_text = procfs.Read("meminfo");
  if (!meminfo_text) return ErrorOf(meminfo_text);
  const std::string meminfo_path = procfs.PathOf("meminfo").string();
  const Meminfo meminfo = ParseMeminfo(*meminfo_text, meminfo_path);
  if (Status usable = CheckMeminfoUsable(meminfo, meminfo_path); !usable) {
    return ErrorOf(usable);
  }
  sample.meminfo = meminfo.values;
  auto vmstat_text = procfs.Read("vmstat");
  if (!vmstat_text) return ErrorOf(vmstat_text);
  sample.vmstat = ParseProcVmstat(*vmstat_text, procfs.PathOf("vmstat").string());
  return sample;
}

VmstatColumns ComputeVmstatSinceBoot(const VmSample& cur, const VmstatParams& p) {
  VmstatColumns out;
  FillMemory(cur, p, out);
  const uint64_t div = FillCpu(SplitTicks(cur.stat.total), out);
  const uint64_t half = div / 2;
  // Unsigned 64-bit arithmetic, truncated to 32 bits, as procps prints with %u.
  const auto per_cpu_second = [&](uint64_t count) {
    return static_cast<uint32_t>((count * p.hz + half) / div);
  };
  const NamedValues& v = cur.vmstat;
  out.si = per_cpu_second(ConvertKib(v.GetOr("pswpin", 0) * p.page_kib, p.unit_bytes));
  out.so = per_cpu_second(ConvertKib(v.GetOr("pswpout", 0) * p.page_kib, p.unit_bytes));
  out.bi = per_cpu_second(v.GetOr("pgpgin", 0));
  out.bo = per_cpu_second(v.GetOr("pgpgout", 0));
  out.in = per_cpu_second(cur.stat.interrupts);
  out.cs = per_cpu_second(cur.stat.context_switches);
  return out;
}

VmstatColumns ComputeVmstatInterval(const VmSample& prev, const VmSample& cur, uint64_t delay_s,
                                    const VmstatParams& p) {
  VmstatColumns out;
  FillMemory(cur, p, out);
  FillCpu(SplitTicks(ClampedDelta(prev.stat.total, cur.stat.total)), out);
  const uint64_t d = delay_s != 0 ? delay_s : 1;
  const uint64_t half = d / 2;
  const auto per_second = [&](uint64_t delta) { return static_cast<uint32_t>((delta + half) / d); };
  const auto counter = [&](const char* name) {
    return Delta(prev.vmstat.GetOr(name, 0), cur.vmstat.GetOr(name, 0));
  };
  out.si = per_second(ConvertKib(counter("pswpin") * p.page_kib, p.unit_bytes));
  out.so = per_second(ConvertKib(counter("pswpout") * p.page_kib, p.unit_bytes));
  out.bi = per_second(counter("pgpgin"));
  out.bo = per_second(counter("pgpgout"));
  // procps takes these deltas as 32-bit values and adds in 32-bit unsigned arithmetic.
  const auto per_second32 = [&](uint64_t prev_count, uint64_t cur_count) {
    const uint32_t delta = static_cast<uint32_t>(Delta(prev_count, cur_count));
    return static_cast<uint32_t>(delta + static_cast<uint32_t>(half)) / static_cast<uint32_t>(d);
  };
  out.in = per_second32(prev.stat.interrupts, cur.stat.interrupts);
  out.cs = per_second32(prev.stat.context_switches, cur.stat.context_switches);
  return out;
}

VmstatRates ComputeVmstatRates(const VmSample& prev, const VmSample& cur, double elapsed_s,
                               uint64_t page_bytes) {
  VmstatRates r;
  const NamedValues& m = cur.meminfo;
  const auto kib = [&](const char* name) { return static_cast<double>(m.GetOr(name, 0)) * 1024; };
  const uint64_t swap_total = m.GetOr("SwapTotal", 0);
  const uint64_t swap_free = m.GetOr("SwapFree", 0);
  r.procs_running = static_cast<double>(cur.stat.procs_running);
  r.procs_blocked = static_cast<double>(cur.stat.procs_blocked);
  r.swap_used_bytes =
      swap_free < swap_total ? static_cast<double>(swap_total - swap_free) * 1024 : 0;
  r.free_bytes = kib("MemFree");
  r.buffers_bytes = kib("Buffers");
  r.cache_bytes = kib("Cached") + kib("SReclaimable");
  r.inactive_bytes = kib("Inactive");
  r.active_bytes = kib("Active");
  if (elapsed_s <= 0) return r;
  const auto rate = [&](const char* name, double scale) {
    return static_cast<double>(Delta(prev.vmstat.GetOr(name, 0), cur.vmstat.GetOr(name, 0))) *
           scale / elapsed_s;
  };
  r.swap_in_bytes_per_s = rate("pswpin", static_cast<double>(page_bytes));
  r.swap_out_bytes_per_s = rate("pswpout", static_cast<double>(page_bytes));
  r.io_in_bytes_per_s = rate("pgpgin", 1024);  // the kernel counts these in KiB
  r.io_out_bytes_per_s = rate("pgpgout", 1024);
  r.interrupts_per_s =
      static_cast<double>(Delta(prev.stat.interrupts, cur.stat.interrupts)) / elapsed_s;
  r.context_switches_per_s =
      static_cast<double>(Delta(prev.stat.context_switches, cur.stat.context_switches)) / elapsed_s;
  CpuSplit cpu = SplitTicks(ClampedDelta(prev.stat.total, cur.stat.total));
  const uint64_t total = cpu.use + cpu.sys + cpu.idl + cpu.iow + cpu.sto;
  if (total == 0) {
    r.idle_ratio = 1;
    return r;
  }
  cpu.use = cpu.use >= cpu.gue ? cpu.use - cpu.gue : 0;
  const auto ratio = [total](uint64_t x) {
    return static_cast<double>(x) / static_cast<double>(total);
  };
  r.user_ratio = ratio(cpu.use);
  r.system_ratio = ratio(cpu.sys);
  r.idle_ratio = ratio(cpu.idl);
  r.iowait_ratio = ratio(cpu.iow);
  r.steal_ratio = ratio(cpu.sto);
  r.guest_ratio = ratio(cpu.gue);
  return r;
}

}  // namespace iowatch::collectors
