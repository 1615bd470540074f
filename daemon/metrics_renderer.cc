#include "daemon/metrics_renderer.h"

#include <fmt/format.h>

#include "daemon/derived_series.h"
#include "daemon/exposition.h"

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
#define C(field, scale) [](const DiskCounters& c) { return static_cast<double>(c.field) scale; }
// node_exporter's node_disk_* names; discarded sectors are exported in bytes.
const RawDiskSeries kRawDisk[] = {
    {"iowatch_disk_reads_completed_total", "counter", "Reads completed successfully.",
     C(reads, *1)},
    {"iowatch_disk_reads_merged_total", "counter", "Adjacent reads merged.", C(reads_merged, *1)},
    {"iowatch_disk_read_bytes_total", "counter", "Bytes read.", C(read_sectors, *512)},
    {"iowatch_disk_read_time_seconds_total", "counter", "Time spent by all reads.",
     C(read_ms, / 1000)},
    {"iowatch_disk_writes_completed_total", "counter", "Writes completed successfully.",
     C(writes, *1)},
    {"iowatch_disk_writes_merged_total", "counter", "Adjacent writes merged.",
     C(writes_merged, *1)},
    {"iowatch_disk_written_bytes_total", "counter", "Bytes written.", C(write_sectors, *512)},
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
    {"iowatch_disk_discarded_bytes_total", "counter", "Bytes discarded.", C(discard_sectors, *512)},
    {"iowatch_disk_discard_time_seconds_total", "counter", "Time spent by all discards.",
     C(discard_ms, / 1000)},
    {"iowatch_disk_flush_requests_total", "counter", "Flush requests completed successfully.",
     C(flushes, *1)},
    {"iowatch_disk_flush_requests_time_seconds_total", "counter",
     "Time spent by all flush requests.", C(flush_ms, / 1000)},
};
#undef C

void RenderDisks(const Snapshot& s, ExpositionWriter& w) {
  for (const RawDiskSeries& series : kRawDisk) {
    w.Family(series.name, series.type, series.help);
    for (const DeviceSnapshot& d : s.devices)
      w.Sample({{"device", d.name}}, series.value(d.counters));
  }
  const auto table = IostatSeriesTable();
  for (size_t i = 0; i < table.size(); ++i) {
    const IostatSeries& series = table[i];
    const size_t count = series.op ? 2 : 1;
    for (const bool window : {false, true}) {
      if (window) {
        w.Family(std::string(series.metric) + "_window_max", "gauge",
                 fmt::format("Maximum of {} over the sampling window.", series.metric));
      } else {
        w.Family(series.metric, "gauge", series.help);
      }
      for (const DeviceSnapshot& d : s.devices) {
        if (!d.has_rates) continue;  // a device's first sample has no interval yet
        const Label labels[] = {{"device", d.name}, {"op", series.op ? series.op : ""}};
        w.Sample(labels, count, window ? d.window_max[i] : d.latest[i]);
      }
    }
  }
  for (const DeviceSnapshot& d : s.devices) {
    if (!d.has_rates) continue;
    w.Family("iowatch_disk_counters_reset", "gauge",
             "1 when the device's counters went backwards in the last interval (removed and "
             "re-added); its rates then read 0.");
    w.Sample({{"device", d.name}}, d.counters_reset ? 1 : 0);
  }
}

void RenderDeviceInfo(const Snapshot& s, ExpositionWriter& w) {
  for (const collectors::BlockDevice& b : s.block_devices) {
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
    w.Family("iowatch_disk_info", "gauge",
             "Identity and queue settings of a block device (always 1), read from sysfs at "
             "discovery.");
    w.Sample({{"device", b.name},
              {"major", major},
              {"minor", minor},
              {"dm_name", b.dm_name},
              {"partition", b.is_partition ? "1" : "0"},
              {"parent", b.parent},
              {"model", b.model},
              {"serial", b.serial},
              {"wwid", b.wwid},
              {"rotational", rotational},
              {"scheduler", b.queue.scheduler},
              {"logical_block_size", lbs},
              {"physical_block_size", pbs},
              {"nr_requests", nr},
              {"max_sectors_kb", max_kb},
              {"read_ahead_kb", ra_kb},
              {"optimal_io_size", opt}},
             1);
    if (b.md) {
      w.Family("iowatch_md_info", "gauge", "Software RAID (md) array level (always 1).");
      w.Sample({{"device", b.name}, {"level", b.md->level}}, 1);
      w.Family("iowatch_md_chunk_bytes", "gauge", "md array chunk size, bytes.");
      w.SampleInt({{"device", b.name}}, b.md->chunk_bytes);
      w.Family("iowatch_md_raid_disks", "gauge", "Number of member disks of the md array.");
      w.SampleInt({{"device", b.name}}, b.md->raid_disks);
    }
  }
}

void RenderVm(const Snapshot& s, ExpositionWriter& w) {
  if (s.has_vm_rates) {
    const auto table = VmstatSeriesTable();
    for (size_t i = 0; i < table.size(); ++i) {
      const VmstatSeries& series = table[i];
      const Label label{series.label_name ? series.label_name : "",
                        series.label_value ? series.label_value : ""};
      const size_t count = series.label_name ? 1 : 0;
      w.Family(series.metric, "gauge", series.help);
      w.Sample(&label, count, s.vm_latest[i]);
      w.Family(std::string(series.metric) + "_window_max", "gauge",
               fmt::format("Maximum of {} over the sampling window.", series.metric));
      w.Sample(&label, count, s.vm_window_max[i]);
    }
  }
  // One family per file with the kernel's own field names as a label: the
  // names stay searchable as printed in /proc, and promtool's snake_case rule
  // holds (node_exporter's node_memory_MemTotal_bytes style does not).
  if (s.meminfo) {
    const auto& entries = s.meminfo->values.entries;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (s.meminfo->in_kib[i]) {
        w.Family("iowatch_meminfo_bytes", "gauge", "/proc/meminfo fields given in kB, in bytes.");
        w.Sample({{"field", entries[i].first}}, static_cast<double>(entries[i].second) * 1024);
      } else {
        w.Family("iowatch_meminfo_pages", "gauge",
                 "/proc/meminfo fields without a unit (HugePages_* counts).");
        w.SampleInt({{"field", entries[i].first}}, entries[i].second);
      }
    }
  }
  if (s.vmstat) {
    // Most fields count events, some are gauges (nr_*, workingset_nodes): untyped,
    // as node_exporter exports them.
    w.Family("iowatch_vmstat", "untyped", "/proc/vmstat fields, by name.");
    for (const auto& [field, value] : s.vmstat->entries) w.SampleInt({{"field", field}}, value);
  }
}

void RenderCpu(const Snapshot& s, ExpositionWriter& w) {
  if (!s.stat) return;
  const collectors::ProcStat& stat = *s.stat;
  const double hz = s.user_hz > 0 ? s.user_hz : 100;
  for (size_t cpu = 0; cpu < stat.per_cpu.size(); ++cpu) {
    const collectors::CpuTicks& t = stat.per_cpu[cpu];
    const std::string id = std::to_string(cpu);
    const std::pair<const char*, uint64_t> modes[] = {
        {"user", t.user},     {"nice", t.nice}, {"system", t.system},   {"idle", t.idle},
        {"iowait", t.iowait}, {"irq", t.irq},   {"softirq", t.softirq}, {"steal", t.steal}};
    w.Family("iowatch_cpu_seconds_total", "counter",
             "Seconds the CPU spent in each mode (user and nice include guest time).");
    for (const auto& [mode, ticks] : modes) {
      w.Sample({{"cpu", id}, {"mode", mode}}, static_cast<double>(ticks) / hz);
    }
    w.Family("iowatch_cpu_guest_seconds_total", "counter",
             "Seconds the CPU spent running guests, also counted in user and nice.");
    w.Sample({{"cpu", id}, {"mode", "user"}}, static_cast<double>(t.guest) / hz);
    w.Sample({{"cpu", id}, {"mode", "nice"}}, static_cast<double>(t.guest_nice) / hz);
  }
  w.Family("iowatch_intr_total", "counter", "Interrupts serviced since boot.");
  w.SampleInt({}, stat.interrupts);
  w.Family("iowatch_context_switches_total", "counter", "Context switches since boot.");
  w.SampleInt({}, stat.context_switches);
  w.Family("iowatch_forks_total", "counter", "Processes and threads created since boot.");
  w.SampleInt({}, stat.forks);
  w.Family("iowatch_procs_running", "gauge", "Processes in runnable state.");
  w.SampleInt({}, stat.procs_running);
  w.Family("iowatch_procs_blocked", "gauge", "Processes blocked waiting for I/O.");
  w.SampleInt({}, stat.procs_blocked);
  w.Family("iowatch_boot_time_seconds", "gauge", "Boot time, seconds since the epoch.");
  w.SampleInt({}, stat.boot_time);
}

void RenderHealth(const Snapshot& s, ExpositionWriter& w) {
  for (const CollectorStatus& c : s.collectors) {
    w.Family("iowatch_collector_duration_seconds", "gauge",
             "Time the last sample spent reading and parsing each source.");
    w.Sample({{"collector", c.name}}, c.duration_seconds);
    w.Family("iowatch_collector_success", "gauge", "1 when the source was read and parsed.");
    w.Sample({{"collector", c.name}}, c.success ? 1 : 0);
    w.Family("iowatch_collector_parse_errors_total", "counter",
             "Malformed lines skipped since start.");
    w.SampleInt({{"collector", c.name}}, c.parse_errors_total);
  }
  w.Family("iowatch_sample_timestamp_seconds", "gauge", "When the sample served was taken.");
  w.Sample({}, s.timestamp_seconds);
  w.Family("iowatch_sampling_interval_seconds", "gauge", "Configured sampling interval.");
  w.Sample({}, s.interval_seconds);
  w.Family("iowatch_sampling_window_seconds", "gauge",
           "Window over which the *_window_max series take their maximum.");
  w.Sample({}, s.window_seconds);
}

}  // namespace

std::string RenderSnapshot(const Snapshot& snapshot) {
  ExpositionWriter writer;
  RenderDisks(snapshot, writer);
  RenderDeviceInfo(snapshot, writer);
  RenderVm(snapshot, writer);
  RenderCpu(snapshot, writer);
  RenderHealth(snapshot, writer);
  return std::move(writer).Finish();
}

}  // namespace iowatch::daemon
