#include "daemon/metrics/metrics_renderer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>

#include "daemon/metrics/exposition.h"
#include "daemon/metrics/family_table.h"
#include "daemon/sampling/derived_series.h"

namespace iowatch::daemon {
namespace {

using collectors::DiskCounters;

struct RawDiskSeries {
  const char* name;
  const char* type;
  const char* help;
  double (*value)(const DiskCounters&);
};

// Milliseconds are divided (not multiplied by 0.001) so that 5600 ms prints as 5.6.
constexpr auto kSectorBytes = static_cast<double>(collectors::kSectorBytes);
// NOLINTNEXTLINE(bugprone-macro-parentheses): `scale` is an operator with its operand ("* 1").
#define C(field, scale) [](const DiskCounters& c) { return static_cast<double>(c.field) scale; }
// node_exporter's node_disk_* names; discarded sectors are exported in bytes.
const RawDiskSeries kRawDisk[] = {
    {"iowatch_disk_reads_completed_total", "counter", "Reads completed successfully.",
     C(reads, *1)},
    {"iowatch_disk_reads_merged_total", "counter", "Adjacent reads merged.", C(reads_merged, *1)},
    {"iowatch_disk_read_bytes_total", "counter", "Bytes read.", C(read_sectors, *kSectorBytes)},
    {"iowatch_disk_read_time_seconds_total", "counter", "Time spent by all reads.",
     C(read_ms, / 1000)},
    {"iowatch_disk_writes_completed_total", "counter", "Writes completed successfully.",
     C(writes, *1)},
    {"iowatch_disk_writes_merged_total", "counter", "Adjacent writes merged.",
     C(writes_merged, *1)},
    {"iowatch_disk_written_bytes_total", "counter", "Bytes written.",
     C(write_sectors, *kSectorBytes)},
    {"iowatch_disk_write_time_seconds_total", "counter", "Time spent by all writes.",
     C(write_ms, / 1000)},
    {"iowatch_disk_io_now", "gauge", "I/Os currently in progress.", C(in_flight, *1)},
    {"iowatch_disk_io_time_seconds_total", "counter", "Time with at least one I/O in progress.",
     C(io_ms, / 1000)},
    {"iowatch_disk_io_time_weighted_seconds_total", "counter",
     "Time spent doing I/Os, weighted by the number in progress.", C(weighted_io_ms, / 1000)},
    {"iowatch_disk_discards_completed_total", "counter", "Discards completed successfully.",
     C(discards, *1)},
    {"iowatch_disk_discards_merged_total", "counter", "Adjacent discards merged.",
     C(discards_merged, *1)},
    {"iowatch_disk_discarded_bytes_total", "counter", "Bytes discarded.",
     C(discard_sectors, *kSectorBytes)},
    {"iowatch_disk_discard_time_seconds_total", "counter", "Time spent by all discards.",
     C(discard_ms, / 1000)},
    {"iowatch_disk_flush_requests_total", "counter", "Flush requests completed successfully.",
     C(flushes, *1)},
    {"iowatch_disk_flush_requests_time_seconds_total", "counter",
     "Time spent by all flush requests.", C(flush_ms, / 1000)},
};
#undef C

size_t Devices(const Snapshot& s) { return s.devices.size(); }
size_t BlockDevices(const Snapshot& s) { return s.block_devices->size(); }
size_t IfVmRates(const Snapshot& s) { return s.has_vm_rates ? 1 : 0; }
size_t MeminfoFields(const Snapshot& s) { return s.meminfo ? s.meminfo->values.entries.size() : 0; }
size_t VmstatFields(const Snapshot& s) { return s.vmstat ? s.vmstat->entries.size() : 0; }
size_t Cpus(const Snapshot& s) { return s.stat ? s.stat->per_cpu.size() : 0; }
size_t IfStat(const Snapshot& s) { return s.stat ? 1 : 0; }
size_t Collectors(const Snapshot& s) { return s.collectors.size(); }

void RawDisk(const Snapshot& s, size_t i, size_t column, ExpositionWriter& w) {
  const DeviceSnapshot& d = s.devices[i];
  w.Sample({{"device", d.name}}, kRawDisk[column].value(d.counters));
}

template <bool kWindow>
void Iostat(const Snapshot& s, size_t i, size_t column, ExpositionWriter& w) {
  const DeviceSnapshot& d = s.devices[i];
  if (!d.has_rates) return;  // a device's first sample has no interval yet
  const IostatSeries& series = IostatSeriesTable()[column];
  const Label labels[] = {{"device", d.name}, {"op", series.op ? series.op : ""}};
  w.Sample(labels, series.op ? 2 : 1, kWindow ? d.window_max[column] : d.latest[column]);
}

void CountersReset(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const DeviceSnapshot& d = s.devices[i];
  if (d.has_rates) w.Sample({{"device", d.name}}, d.counters_reset ? 1 : 0);
}

void DiskInfo(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const collectors::BlockDevice& b = (*s.block_devices)[i];
  const std::string major = std::to_string(b.major);
  const std::string minor = std::to_string(b.minor);
  const std::string lbs = std::to_string(b.queue.logical_block_size);
  const std::string pbs = std::to_string(b.queue.physical_block_size);
  const std::string nr = std::to_string(b.queue.nr_requests);
  const std::string max_kb = std::to_string(b.queue.max_sectors_kb);
  const std::string ra_kb = std::to_string(b.queue.read_ahead_kb);
  const std::string opt = std::to_string(b.queue.optimal_io_size);
  const std::string rotational =
      b.queue.rotational ? (*b.queue.rotational ? "1" : "0") : std::string();
  const std::string size = std::to_string(b.size_bytes);
  w.Sample({{"device", b.name},
            {"major", major},
            {"minor", minor},
            {"dm_name", b.dm_name},
            {"partition", b.is_partition ? "1" : "0"},
            {"parent", b.parent},
            {"model", b.model},
            {"serial", b.serial},
            {"wwid", b.wwid},
            {"wwn", b.wwn},
            {"firmware_rev", b.firmware_rev},
            {"vendor", b.vendor},
            {"transport", b.transport},
            {"size_bytes", size},
            {"rotational", rotational},
            {"scheduler", b.queue.scheduler},
            {"logical_block_size", lbs},
            {"physical_block_size", pbs},
            {"nr_requests", nr},
            {"max_sectors_kb", max_kb},
            {"read_ahead_kb", ra_kb},
            {"optimal_io_size", opt}},
           1);
}

void HolderInfo(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const collectors::BlockDevice& b = (*s.block_devices)[i];
  for (const collectors::Holder& h : b.holders) {
    w.Sample({{"device", b.name}, {"partition", h.partition}, {"holder", h.holder}}, 1);
  }
}

void MdInfo(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const collectors::BlockDevice& b = (*s.block_devices)[i];
  if (b.md) w.Sample({{"device", b.name}, {"level", b.md->level}}, 1);
}

void MdChunkBytes(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const collectors::BlockDevice& b = (*s.block_devices)[i];
  if (b.md) w.SampleInt({{"device", b.name}}, b.md->chunk_bytes);
}

void MdRaidDisks(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const collectors::BlockDevice& b = (*s.block_devices)[i];
  if (b.md) w.SampleInt({{"device", b.name}}, b.md->raid_disks);
}

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

struct StatField {
  const char* name;
  const char* type;
  const char* help;
  uint64_t collectors::ProcStat::*value;
};
const StatField kStatFields[] = {
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

void CollectorDuration(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  w.Sample({{"collector", s.collectors[i].name}}, s.collectors[i].duration_seconds);
}

void CollectorSuccess(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  w.Sample({{"collector", s.collectors[i].name}}, s.collectors[i].success ? 1 : 0);
}

void CollectorTimeouts(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  w.SampleInt({{"collector", s.collectors[i].name}}, s.collectors[i].timeouts_total);
}

void CollectorParseErrors(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  w.SampleInt({{"collector", s.collectors[i].name}}, s.collectors[i].parse_errors_total);
}

struct SnapshotField {
  const char* name;
  const char* help;
  double Snapshot::*value;
};
const SnapshotField kSnapshotFields[] = {
    {"iowatch_sample_timestamp_seconds", "When the sample served was taken.",
     &Snapshot::timestamp_seconds},
    {"iowatch_sampling_interval_seconds", "Configured sampling interval.",
     &Snapshot::interval_seconds},
    {"iowatch_sampling_window_seconds",
     "Window over which the *_window_max series take their maximum.", &Snapshot::window_seconds},
};

void SnapshotValue(const Snapshot& s, size_t, size_t field, ExpositionWriter& w) {
  w.Sample({}, s.*kSnapshotFields[field].value);
}

void AddDiskFamilies(TableBuilder& t) {
  for (size_t i = 0; i < std::size(kRawDisk); ++i) {
    t.Add(kRawDisk[i].name, kRawDisk[i].type, kRawDisk[i].help, {Devices, RawDisk, i});
  }
  const auto iostat = IostatSeriesTable();
  for (size_t i = 0; i < iostat.size(); ++i) {
    const std::string metric = iostat[i].metric;
    t.Add(metric, "gauge", iostat[i].help, {Devices, Iostat<false>, i});
    t.Add(metric + "_window_max", "gauge",
          fmt::format("Maximum of {} over the sampling window.", metric),
          {Devices, Iostat<true>, i});
  }
  t.Add("iowatch_disk_counters_reset", "gauge",
        "1 when the device's counters went backwards in the last interval (removed and "
        "re-added); its rates then read 0.",
        {Devices, CountersReset});
  t.Add("iowatch_disk_info", "gauge",
        "Identity and queue settings of a block device (always 1), read from sysfs at discovery.",
        {BlockDevices, DiskInfo});
  t.Add("iowatch_disk_holder_info", "gauge",
        "A device stacked on the disk or one of its partitions (always 1): holders/ in sysfs "
        "(dm, md) and loop devices whose backing file lives there.",
        {BlockDevices, HolderInfo});
  t.Add("iowatch_md_info", "gauge", "Software RAID (md) array level (always 1).",
        {BlockDevices, MdInfo});
  t.Add("iowatch_md_chunk_bytes", "gauge", "md array chunk size, bytes.",
        {BlockDevices, MdChunkBytes});
  t.Add("iowatch_md_raid_disks", "gauge", "Number of member disks of the md array.",
        {BlockDevices, MdRaidDisks});
}

void AddHostFamilies(TableBuilder& t) {
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
  for (size_t i = 0; i < std::size(kStatFields); ++i) {
    t.Add(kStatFields[i].name, kStatFields[i].type, kStatFields[i].help,
          {IfStat, ProcStatField, i});
  }
}

void AddSelfFamilies(TableBuilder& t) {
  t.Add("iowatch_collector_duration_seconds", "gauge",
        "Time the last sample spent reading and parsing each source.",
        {Collectors, CollectorDuration});
  t.Add("iowatch_collector_success", "gauge", "1 when the source was read and parsed.",
        {Collectors, CollectorSuccess});
  t.Add("iowatch_collector_parse_errors_total", "counter", "Malformed lines skipped since start.",
        {Collectors, CollectorParseErrors});
  t.Add("iowatch_collector_timeouts_total", "counter",
        "Samples in which the source did not answer within the read deadline (its previous "
        "values were served).",
        {Collectors, CollectorTimeouts});
  for (size_t i = 0; i < std::size(kSnapshotFields); ++i) {
    t.Add(kSnapshotFields[i].name, "gauge", kSnapshotFields[i].help, {Once, SnapshotValue, i});
  }
}

std::vector<FamilyDef> BuildFamilies() {
  TableBuilder t;
  AddDiskFamilies(t);
  AddHostFamilies(t);
  AddPressureFamilies(t);
  AddCgroupFamilies(t);
  AddBlockIoFamilies(t);
  AddAdviceFamilies(t);
  AddSelfFamilies(t);
  return std::move(t).Sorted();
}

const std::vector<FamilyDef>& Families() {
  static const std::vector<FamilyDef> families = BuildFamilies();
  return families;
}

}  // namespace

MetricsCursor::MetricsCursor(std::shared_ptr<const Snapshot> snapshot)
    : snapshot_(std::move(snapshot)) {}

bool MetricsCursor::Next(std::string& out, size_t piece_bytes) {
  const std::vector<FamilyDef>& families = Families();
  const Snapshot& s = *snapshot_;
  const size_t target = out.size() + piece_bytes;
  ExpositionWriter w(out);
  for (; family_ < families.size(); ++family_, part_ = 0, header_written_ = false) {
    const FamilyDef& f = families[family_];
    w.Family(f.name, f.type, f.help, header_written_);
    for (; part_ < f.parts.size(); ++part_, item_ = 0) {
      const Part& p = f.parts[part_];
      for (const size_t n = p.count(s); item_ < n;) {
        p.write(s, item_++, p.arg, w);
        if (out.size() >= target) {
          header_written_ = w.header_written();
          return true;
        }
      }
    }
  }
  return false;
}

std::string RenderSnapshot(const Snapshot& snapshot) {
  // Not owning: the caller keeps the snapshot alive for the call.
  MetricsCursor cursor(
      std::shared_ptr<const Snapshot>(std::shared_ptr<const Snapshot>(), &snapshot));
  std::string out;
  while (cursor.Next(out, size_t{1} << 20)) {
  }
  return out;
}

std::vector<std::string_view> MetricFamilyNames() {
  std::vector<std::string_view> names;
  for (const FamilyDef& f : Families()) names.push_back(f.name);
  return names;
}

}  // namespace iowatch::daemon
