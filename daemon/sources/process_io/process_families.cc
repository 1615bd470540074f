// The per-cgroup /proc/PID/io families (docs/metrics.md): what each
// cgroup's processes read and wrote while they lived, as counters and rates,
// with the processes iowatch could not read and the cgroups it did not keep.
#include <algorithm>

#include "daemon/sources/process_io/process_source.h"

namespace iowatch::daemon {
namespace {

size_t ProcessSeries(const Snapshot& s) { return s.process_io.series.size(); }
constexpr char kProcessCollector[] = "process_io";

const FamilyRow<uint64_t ProcessIoSeries::*> kProcessCounters[] = {
    {"iowatch_cgroup_process_read_bytes_total", "counter",
     "Bytes the cgroup's processes caused to be read from storage (/proc/PID/io read_bytes), "
     "while they lived.",
     &ProcessIoSeries::read_bytes_total},
    {"iowatch_cgroup_process_write_bytes_total", "counter",
     "Bytes the cgroup's processes caused to be written to storage (/proc/PID/io write_bytes).",
     &ProcessIoSeries::write_bytes_total},
    {"iowatch_cgroup_process_cancelled_write_bytes_total", "counter",
     "Dirty bytes the cgroup's processes truncated before writeback (cancelled_write_bytes).",
     &ProcessIoSeries::cancelled_write_bytes_total},
};

void ProcessCounter(const Snapshot& s, size_t i, size_t field, ExpositionWriter& w) {
  const ProcessIoSeries& p = s.process_io.series[i];
  w.SampleInt({{"cgroup", p.cgroup}, {"unit", p.unit}}, p.*kProcessCounters[field].value);
}

void ProcessRate(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const ProcessIoSeries& p = s.process_io.series[i];
  if (!p.has_rates) return;
  w.Sample({{"cgroup", p.cgroup}, {"unit", p.unit}, {"op", "read"}}, p.read_bytes_per_second);
  w.Sample({{"cgroup", p.cgroup}, {"unit", p.unit}, {"op", "write"}}, p.write_bytes_per_second);
}

void ProcessUnreadable(const Snapshot& s, size_t, size_t, ExpositionWriter& w) {
  w.SampleInt({}, s.process_io.unreadable);
}

void ProcessDropped(const Snapshot& s, size_t, size_t, ExpositionWriter& w) {
  w.SampleInt({}, s.process_io.dropped_series);
}

}  // namespace

void AddProcessFamilies(TableBuilder& t) {
  AddRowFamilies(t, kProcessCounters, ProcessSeries, ProcessCounter);
  t.Add("iowatch_cgroup_process_bytes_per_second", "gauge",
        "Bytes per second the cgroup's processes read or wrote, over the last /proc/PID/io "
        "reading's interval.",
        {ProcessSeries, ProcessRate});
  t.Add("iowatch_cgroup_process_unreadable", "gauge",
        "Processes whose /proc/PID/io iowatch may not read (another user's, without "
        "ptrace-read access) at the last reading.",
        {IfCollectorRan<kProcessCollector>, ProcessUnreadable});
  t.Add("iowatch_cgroup_process_dropped_series", "gauge",
        "cgroups whose processes did I/O at the last /proc/PID/io reading but are not exported: "
        "cgroups.max_series are kept, each with a live process.",
        {IfCollectorRan<kProcessCollector>, ProcessDropped});
}

}  // namespace iowatch::daemon
