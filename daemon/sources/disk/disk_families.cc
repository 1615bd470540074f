// The disks' families (docs/metrics.md): /proc/diskstats' counters under
// node_exporter's names, the iostat series with their window maxima, and
// each device's identity, holders and md geometry from sysfs.
#include <fmt/format.h>

#include <string>

#include "daemon/sampling/derived_series.h"
#include "daemon/sources/disk/disk_source.h"

namespace iowatch::daemon {
namespace {

using collectors::DiskCounters;

struct RawDiskValue {
  double (*of)(const DiskCounters&);
  // Whether the device's line has the field (discards and flushes are newer
  // than the rest): a field it lacks is left out, as node_exporter does.
  bool (*reported)(const DiskCounters&) = [](const DiskCounters&) { return true; };
};

// Milliseconds are divided (not multiplied by 0.001) so that 5600 ms prints as 5.6.
constexpr auto kSectorBytes = static_cast<double>(collectors::kSectorBytes);
// NOLINTNEXTLINE(bugprone-macro-parentheses): `scale` is an operator with its operand ("* 1").
#define C(field, scale) [](const DiskCounters& c) { return static_cast<double>(c.field) scale; }
constexpr auto kDiscard = [](const DiskCounters& c) { return c.HasDiscardFields(); };
constexpr auto kFlush = [](const DiskCounters& c) { return c.HasFlushFields(); };
// node_exporter's node_disk_* names; discarded sectors are exported in bytes.
const FamilyRow<RawDiskValue> kRawDisk[] = {
    {"iowatch_disk_reads_completed_total",
     "counter",
     "Reads completed successfully.",
     {C(reads, *1)}},
    {"iowatch_disk_reads_merged_total", "counter", "Adjacent reads merged.", {C(reads_merged, *1)}},
    {"iowatch_disk_read_bytes_total", "counter", "Bytes read.", {C(read_sectors, *kSectorBytes)}},
    {"iowatch_disk_read_time_seconds_total",
     "counter",
     "Time spent by all reads.",
     {C(read_ms, / 1000)}},
    {"iowatch_disk_writes_completed_total",
     "counter",
     "Writes completed successfully.",
     {C(writes, *1)}},
    {"iowatch_disk_writes_merged_total",
     "counter",
     "Adjacent writes merged.",
     {C(writes_merged, *1)}},
    {"iowatch_disk_written_bytes_total",
     "counter",
     "Bytes written.",
     {C(write_sectors, *kSectorBytes)}},
    {"iowatch_disk_write_time_seconds_total",
     "counter",
     "Time spent by all writes.",
     {C(write_ms, / 1000)}},
    {"iowatch_disk_io_now", "gauge", "I/Os currently in progress.", {C(in_flight, *1)}},
    {"iowatch_disk_io_time_seconds_total",
     "counter",
     "Time with at least one I/O in progress.",
     {C(io_ms, / 1000)}},
    {"iowatch_disk_io_time_weighted_seconds_total",
     "counter",
     "Time spent doing I/Os, weighted by the number in progress.",
     {C(weighted_io_ms, / 1000)}},
    {"iowatch_disk_discards_completed_total",
     "counter",
     "Discards completed successfully.",
     {C(discards, *1), kDiscard}},
    {"iowatch_disk_discards_merged_total",
     "counter",
     "Adjacent discards merged.",
     {C(discards_merged, *1), kDiscard}},
    {"iowatch_disk_discarded_bytes_total",
     "counter",
     "Bytes discarded.",
     {C(discard_sectors, *kSectorBytes), kDiscard}},
    {"iowatch_disk_discard_time_seconds_total",
     "counter",
     "Time spent by all discards.",
     {C(discard_ms, / 1000), kDiscard}},
    {"iowatch_disk_flush_requests_total",
     "counter",
     "Flush requests completed successfully.",
     {C(flushes, *1), kFlush}},
    {"iowatch_disk_flush_requests_time_seconds_total",
     "counter",
     "Time spent by all flush requests.",
     {C(flush_ms, / 1000), kFlush}},
};
#undef C

size_t Devices(const Snapshot& s) { return s.devices.size(); }
size_t BlockDevices(const Snapshot& s) { return s.block_devices->size(); }

void RawDisk(const Snapshot& s, size_t i, size_t column, ExpositionWriter& w) {
  const DeviceSnapshot& d = s.devices[i];
  const RawDiskValue& value = kRawDisk[column].value;
  if (!value.reported(d.counters)) return;
  w.Sample({{"device", d.name}}, value.of(d.counters));
}

template <bool kWindow>
void Iostat(const Snapshot& s, size_t i, size_t column, ExpositionWriter& w) {
  const DeviceSnapshot& d = s.devices[i];
  if (!d.has_rates) return;  // a device's first sample has no interval yet
  const IostatSeries& series = IostatSeriesTable()[column];
  if (!Reported(series, d.counters)) return;
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

}  // namespace

void AddDiskFamilies(TableBuilder& t) {
  AddRowFamilies(t, kRawDisk, Devices, RawDisk);
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
}

}  // namespace iowatch::daemon
