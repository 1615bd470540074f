// Per-cgroup I/O families (docs/metrics.md): counters in base units and the
// per-interval rates with their window maxima, labelled cgroup, unit and
// device as the iostat series are.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "daemon/sources/cgroup/cgroup_source.h"

namespace iowatch::daemon {
namespace {

size_t CgroupPairs(const Snapshot& s) { return s.cgroups.series.size(); }
size_t CgroupPressures(const Snapshot& s) { return s.cgroups.pressure.size(); }
constexpr char kCgroupCollector[] = "cgroup";

const FamilyRow<uint64_t collectors::CgroupDeviceIo::*> kCounters[] = {
    {"iowatch_cgroup_io_read_bytes_total", "counter", "Bytes the cgroup read from the device.",
     &collectors::CgroupDeviceIo::read_bytes},
    {"iowatch_cgroup_io_write_bytes_total", "counter", "Bytes the cgroup wrote to the device.",
     &collectors::CgroupDeviceIo::write_bytes},
    {"iowatch_cgroup_io_reads_total", "counter", "Read requests of the cgroup on the device.",
     &collectors::CgroupDeviceIo::reads},
    {"iowatch_cgroup_io_writes_total", "counter", "Write requests of the cgroup on the device.",
     &collectors::CgroupDeviceIo::writes},
    {"iowatch_cgroup_io_discard_bytes_total", "counter",
     "Bytes the cgroup discarded on the device.", &collectors::CgroupDeviceIo::discard_bytes},
    {"iowatch_cgroup_io_discards_total", "counter", "Discard requests of the cgroup on the device.",
     &collectors::CgroupDeviceIo::discards},
};

void CgroupCounter(const Snapshot& s, size_t i, size_t field, ExpositionWriter& w) {
  const CgroupSeries& c = s.cgroups.series[i];
  w.SampleInt({{"cgroup", c.cgroup}, {"unit", c.unit}, {"device", c.device}},
              c.counters.*kCounters[field].value);
}

// `arg`: 0 bytes, 1 requests; each writes its read and write rates.
template <bool kWindow>
void CgroupRate(const Snapshot& s, size_t i, size_t arg, ExpositionWriter& w) {
  const CgroupSeries& c = s.cgroups.series[i];
  if (!c.has_rates) return;
  const auto& values = kWindow ? c.window_max : c.latest;
  constexpr const char* kOps[] = {"read", "write"};
  for (size_t op = 0; op < 2; ++op) {
    w.Sample({{"cgroup", c.cgroup}, {"unit", c.unit}, {"device", c.device}, {"op", kOps[op]}},
             values[arg * 2 + op]);
  }
}

void CgroupPressureSeconds(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const CgroupPressureSeries& p = s.cgroups.pressure[i];
  w.Sample({{"cgroup", p.cgroup}, {"unit", p.unit}, {"kind", "some"}},
           static_cast<double>(p.pressure.some.total_us) / 1e6);
  if (p.pressure.full) {
    w.Sample({{"cgroup", p.cgroup}, {"unit", p.unit}, {"kind", "full"}},
             static_cast<double>(p.pressure.full->total_us) / 1e6);
  }
}

void CgroupDropped(const Snapshot& s, size_t, size_t, ExpositionWriter& w) {
  w.SampleInt({}, s.cgroups.dropped_series);
}

const FamilyRow<std::optional<uint64_t> collectors::CgroupIoControllers::*> kControllers[] = {
    {"iowatch_cgroup_io_cost_usage_seconds_total", "counter",
     "Device time io.cost charged to the cgroup (io.stat cost.usage).",
     &collectors::CgroupIoControllers::cost_usage_us},
    {"iowatch_cgroup_io_cost_wait_seconds_total", "counter",
     "Time the cgroup's I/O waited for io.cost's budget (cost.wait).",
     &collectors::CgroupIoControllers::cost_wait_us},
    {"iowatch_cgroup_io_cost_indebt_seconds_total", "counter",
     "Time the cgroup spent in debt to io.cost (cost.indebt).",
     &collectors::CgroupIoControllers::cost_indebt_us},
    {"iowatch_cgroup_io_cost_indelay_seconds_total", "counter",
     "Time the cgroup's tasks were delayed by io.cost (cost.indelay).",
     &collectors::CgroupIoControllers::cost_indelay_us},
    {"iowatch_cgroup_io_latency_avg_seconds", "gauge",
     "io.latency's moving average of the cgroup's I/O latency (io.stat avg_lat).",
     &collectors::CgroupIoControllers::latency_avg_us},
};

void CgroupController(const Snapshot& s, size_t i, size_t field, ExpositionWriter& w) {
  const CgroupSeries& c = s.cgroups.series[i];
  if (const auto& value = c.counters.controllers.*kControllers[field].value) {
    w.Sample({{"cgroup", c.cgroup}, {"unit", c.unit}, {"device", c.device}},
             static_cast<double>(*value) / 1e6);
  }
}

}  // namespace

void AddCgroupFamilies(TableBuilder& t) {
  AddRowFamilies(t, kControllers, CgroupPairs, CgroupController);
  AddRowFamilies(t, kCounters, CgroupPairs, CgroupCounter);
  const char* kRates[][2] = {
      {"iowatch_cgroup_io_bytes_per_second", "Bytes per second the cgroup read or wrote"},
      {"iowatch_cgroup_io_requests_per_second", "Requests per second the cgroup read or wrote"}};
  for (size_t arg = 0; arg < 2; ++arg) {
    const std::string name = kRates[arg][0];
    t.Add(name, "gauge", fmt::format("{} over the last interval.", kRates[arg][1]),
          {CgroupPairs, CgroupRate<false>, arg});
    t.Add(name + "_window_max", "gauge",
          fmt::format("Maximum of {} over the sampling window.", name),
          {CgroupPairs, CgroupRate<true>, arg});
  }
  t.Add("iowatch_cgroup_io_pressure_seconds_total", "counter",
        "Time some (full: all) of the cgroup's tasks were stalled on I/O (io.pressure total).",
        {CgroupPressures, CgroupPressureSeconds});
  t.Add("iowatch_cgroup_io_dropped_series", "gauge",
        "cgroup x device pairs not exported in this sample: over cgroups.max_series.",
        {IfCollectorRan<kCgroupCollector>, CgroupDropped});
}

}  // namespace iowatch::daemon
