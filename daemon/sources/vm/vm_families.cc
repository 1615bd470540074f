// The host's families (docs/metrics.md): the vmstat series with their
// window maxima, /proc/meminfo and /proc/vmstat fields by name, and
// /proc/stat's CPU times and counters under node_exporter's names.
#include <fmt/format.h>

#include <string>
#include <utility>

#include "daemon/sampling/derived_series.h"
#include "daemon/sources/vm/vm_source.h"

namespace iowatch::daemon {
namespace {

size_t IfVmRates(const Snapshot& s) { return s.has_vm_rates ? 1 : 0; }
size_t MeminfoFields(const Snapshot& s) { return s.meminfo ? s.meminfo->values.entries.size() : 0; }
size_t VmstatFields(const Snapshot& s) { return s.vmstat ? s.vmstat->entries.size() : 0; }
size_t Cpus(const Snapshot& s) { return s.stat ? s.stat->per_cpu.size() : 0; }
size_t IfStat(const Snapshot& s) { return s.stat ? 1 : 0; }

template <bool kWindow>
void Vm(const Snapshot& s, size_t, size_t column, ExpositionWriter& w) {
  const VmstatSeries& series = VmstatSeriesTable()[column];
  const Label label{series.label_name ? series.label_name : "",
                    series.label_value ? series.label_value : ""};
  w.Sample(&label, series.label_name ? 1 : 0,
           kWindow ? s.vm_window_max[column] : s.vm_latest[column]);
}

// One family per file with the kernel's own field names as a label: the
// names stay searchable as printed in /proc, and promtool's snake_case rule
// holds (node_exporter's node_memory_MemTotal_bytes style does not).
void MeminfoBytes(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const auto& [field, value] = s.meminfo->values.entries[i];
  if (s.meminfo->in_kib[i]) w.Sample({{"field", field}}, static_cast<double>(value) * 1024);
}

void MeminfoPages(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const auto& [field, value] = s.meminfo->values.entries[i];
  if (!s.meminfo->in_kib[i]) w.SampleInt({{"field", field}}, value);
}

void Vmstat(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const auto& [field, value] = s.vmstat->entries[i];
  w.SampleInt({{"field", field}}, value);
}

double CpuHz(const Snapshot& s) { return s.user_hz > 0 ? s.user_hz : 100; }

void CpuSeconds(const Snapshot& s, size_t cpu, size_t, ExpositionWriter& w) {
  const collectors::CpuTicks& t = s.stat->per_cpu[cpu];
  const std::string id = std::to_string(cpu);
  const std::pair<const char*, uint64_t> modes[] = {
      {"user", t.user},     {"nice", t.nice}, {"system", t.system},   {"idle", t.idle},
      {"iowait", t.iowait}, {"irq", t.irq},   {"softirq", t.softirq}, {"steal", t.steal}};
  for (const auto& [mode, ticks] : modes) {
    w.Sample({{"cpu", id}, {"mode", mode}}, static_cast<double>(ticks) / CpuHz(s));
  }
}

void CpuGuestSeconds(const Snapshot& s, size_t cpu, size_t, ExpositionWriter& w) {
  const collectors::CpuTicks& t = s.stat->per_cpu[cpu];
  const std::string id = std::to_string(cpu);
  w.Sample({{"cpu", id}, {"mode", "user"}}, static_cast<double>(t.guest) / CpuHz(s));
  w.Sample({{"cpu", id}, {"mode", "nice"}}, static_cast<double>(t.guest_nice) / CpuHz(s));
}

const FamilyRow<uint64_t collectors::ProcStat::*> kStatFields[] = {
    {"iowatch_intr_total", "counter", "Interrupts serviced since boot.",
     &collectors::ProcStat::interrupts},
    {"iowatch_context_switches_total", "counter", "Context switches since boot.",
     &collectors::ProcStat::context_switches},
    {"iowatch_forks_total", "counter", "Processes and threads created since boot.",
     &collectors::ProcStat::forks},
    {"iowatch_procs_running", "gauge", "Processes in runnable state.",
     &collectors::ProcStat::procs_running},
    {"iowatch_procs_blocked", "gauge", "Processes blocked waiting for I/O.",
     &collectors::ProcStat::procs_blocked},
    {"iowatch_boot_time_seconds", "gauge", "Boot time, seconds since the epoch.",
     &collectors::ProcStat::boot_time},
};

void ProcStatField(const Snapshot& s, size_t, size_t field, ExpositionWriter& w) {
  w.SampleInt({}, (*s.stat).*kStatFields[field].value);
}

}  // namespace

void AddVmFamilies(TableBuilder& t) {
  const auto vm = VmstatSeriesTable();
  for (size_t i = 0; i < vm.size(); ++i) {
    const std::string metric = vm[i].metric;
    t.Add(metric, "gauge", vm[i].help, {IfVmRates, Vm<false>, i});
    t.Add(metric + "_window_max", "gauge",
          fmt::format("Maximum of {} over the sampling window.", metric), {IfVmRates, Vm<true>, i});
  }
  t.Add("iowatch_meminfo_bytes", "gauge", "/proc/meminfo fields given in kB, in bytes.",
        {MeminfoFields, MeminfoBytes});
  t.Add("iowatch_meminfo_pages", "gauge",
        "/proc/meminfo fields without a unit (HugePages_* counts).", {MeminfoFields, MeminfoPages});
  // Most fields count events, some are gauges (nr_*, workingset_nodes):
  // untyped, as node_exporter exports them.
  t.Add("iowatch_vmstat", "untyped", "/proc/vmstat fields, by name.", {VmstatFields, Vmstat});
  t.Add("iowatch_cpu_seconds_total", "counter",
        "Seconds the CPU spent in each mode (user and nice include guest time).",
        {Cpus, CpuSeconds});
  t.Add("iowatch_cpu_guest_seconds_total", "counter",
        "Seconds the CPU spent running guests, also counted in user and nice.",
        {Cpus, CpuGuestSeconds});
  AddRowFamilies(t, kStatFields, IfStat, ProcStatField);
}

}  // namespace iowatch::daemon
