#include "probes/baseline/run_metrics.h"

#include <array>
#include <chrono>

namespace iowatch::probes {
namespace {

constexpr std::array<MetricSpec, 9> kMetrics = {{
    {"iops", Worse::kLower, false},
    {"bandwidth_bytes", Worse::kLower, false},
    {"clat_mean_seconds", Worse::kHigher, false},
    {"clat_p50_seconds", Worse::kHigher, false},
    {"clat_p90_seconds", Worse::kHigher, false},
    {"clat_p99_seconds", Worse::kHigher, true},
    {"clat_p99_9_seconds", Worse::kHigher, true},
    {"lat_mean_seconds", Worse::kHigher, false},
    {"slat_mean_seconds", Worse::kHigher, false},
}};

// The clat percentiles a baseline keeps, beside their metric names.
struct PercentileMetric {
  double percentile;
  std::string_view name;
};
constexpr std::array<PercentileMetric, 4> kPercentiles = {{
    {50, "clat_p50_seconds"},
    {90, "clat_p90_seconds"},
    {99, "clat_p99_seconds"},
    {99.9, "clat_p99_9_seconds"},
}};

constexpr double kSecondsPerNs = 1e-9;

double NsToSeconds(double ns) { return ns * kSecondsPerNs; }

void AppendDirection(std::string_view op, const DirectionStats& stats,
                     std::vector<MetricSample>& out) {
  if (stats.ios == 0) return;
  auto add = [&](std::string_view metric, double value) {
    out.push_back(MetricSample{std::string(op), std::string(metric), value});
  };
  // Exact rates, not fio's: fio divides by whole milliseconds and floors the
  // bandwidth, which for a short probe moves the figure by up to a few percent
  // from one run to the next for no reason on the disk's side — noise a
  // baseline would then have to absorb.
  const double runtime_s = std::chrono::duration<double>(stats.runtime).count();
  if (runtime_s > 0) {
    add("iops", static_cast<double>(stats.ios) / runtime_s);
    add("bandwidth_bytes", static_cast<double>(stats.bytes) / runtime_s);
  }
  add("clat_mean_seconds", NsToSeconds(stats.clat.Mean()));
  for (const PercentileMetric& p : kPercentiles) {
    add(p.name, NsToSeconds(static_cast<double>(stats.clat_histogram.Percentile(p.percentile))));
  }
  add("lat_mean_seconds", NsToSeconds(stats.lat.Mean()));
  // Sync engines record no submission latency; a 0 here would be a baseline
  // of nothing, and would flag the first async run as infinitely slower.
  if (stats.slat.Count() > 0) add("slat_mean_seconds", NsToSeconds(stats.slat.Mean()));
}

}  // namespace

std::span<const MetricSpec> BaselineMetrics() { return kMetrics; }

const MetricSpec* FindMetric(std::string_view name) {
  for (const MetricSpec& spec : kMetrics) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::vector<MetricSample> ExtractMetrics(const ProbeResult& result) {
  std::vector<MetricSample> out;
  AppendDirection("read", result.read, out);
  AppendDirection("write", result.write, out);
  return out;
}

}  // namespace iowatch::probes
