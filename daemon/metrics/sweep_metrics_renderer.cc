#include "daemon/metrics/sweep_metrics_renderer.h"

#include <array>
#include <string_view>
#include <vector>

#include "daemon/exposition/exposition.h"

namespace iowatch::daemon {
namespace {

struct PointLabels {
  std::string mode, rw, pattern, bs, iodepth;
};

PointLabels LabelsOf(const probes::SweepPoint& p) {
  return {std::string(probes::ToString(p.mode)), p.write ? "write" : "read",
          p.random ? "random" : "sequential", std::to_string(p.block_size),
          std::to_string(p.iodepth)};
}

using Figure = double (*)(const probes::SweepMeasure&);

struct SweepFamily {
  std::string_view name;
  std::string_view help;
  Figure figure;
  std::string_view stat;  // the stat label's value, "" for none
};

constexpr std::array<SweepFamily, 8> kFamilies{{
    {"iowatch_sweep_bandwidth_bytes_per_second", "Bytes per second of the sweep point.",
     [](const probes::SweepMeasure& m) { return m.bytes_per_second; }, ""},
    {"iowatch_sweep_clat_seconds", "Completion latency percentiles of the sweep point.",
     [](const probes::SweepMeasure& m) { return static_cast<double>(m.clat_p50_ns) / 1e9; }, "p50"},
    {"iowatch_sweep_clat_seconds", "",
     [](const probes::SweepMeasure& m) { return static_cast<double>(m.clat_p99_ns) / 1e9; }, "p99"},
    {"iowatch_sweep_cpu_ratio", "User and system CPU time over the sweep point's run time.",
     [](const probes::SweepMeasure& m) { return m.cpu_percent / 100; }, ""},
    {"iowatch_sweep_cpu_seconds_per_gibibyte", "CPU seconds per GiB the sweep point moved.",
     [](const probes::SweepMeasure& m) { return m.cpu_seconds_per_gib; }, ""},
    {"iowatch_sweep_iops", "I/O operations per second of the sweep point.",
     [](const probes::SweepMeasure& m) { return m.iops; }, ""},
    {"iowatch_sweep_lat_seconds",
     "Total latency (submission to completion) percentiles of the sweep point.",
     [](const probes::SweepMeasure& m) { return static_cast<double>(m.lat_p50_ns) / 1e9; }, "p50"},
    {"iowatch_sweep_lat_seconds", "",
     [](const probes::SweepMeasure& m) { return static_cast<double>(m.lat_p99_ns) / 1e9; }, "p99"},
}};

void RenderFamily(const probes::SweepReport& report, const SweepFamily& f, bool continued,
                  std::string& out) {
  ExpositionWriter w(out);
  w.Family(f.name, "gauge", f.help, continued);
  for (const probes::SweepSample& s : report.samples) {
    if (s.measure.end != "completed") continue;
    const PointLabels l = LabelsOf(s.point);
    std::vector<Label> labels = {{"bs", l.bs},           {"device", report.device},
                                 {"iodepth", l.iodepth}, {"mode", l.mode},
                                 {"pattern", l.pattern}, {"rw", l.rw}};
    if (!f.stat.empty()) labels.push_back({"stat", f.stat});
    w.Sample(labels.data(), labels.size(), f.figure(s.measure));
  }
}

}  // namespace

void RenderSweepMetrics(const probes::SweepReport& report, std::string& out) {
  for (size_t i = 0; i < kFamilies.size(); ++i) {
    const bool continued = i > 0 && kFamilies[i - 1].name == kFamilies[i].name;
    RenderFamily(report, kFamilies[i], continued, out);
  }
  ExpositionWriter w(out);
  w.Family("iowatch_sweep_timestamp_seconds", "gauge",
           "When the sweep started, seconds since the epoch.");
  w.Sample({{"device", report.device}}, static_cast<double>(report.started_unix_ms) / 1000);
}

}  // namespace iowatch::daemon
