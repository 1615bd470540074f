#include "probes/verdicts/run_metrics.h"

#include <array>
#include <chrono>

namespace iowatch::probes {
namespace {

using enum Worse;
using enum LatencySource;

// The order is the store's and `baseline show`'s; metrics added later go at
// the end, so older stores read the same.
constexpr std::array<MetricSpec, 13> kMetrics = {{
    {"iops", kLower, false, 0, kNone, true},
    {"bandwidth_bytes", kLower, false, 0, kNone, true},
    {"clat_mean_seconds", kHigher, false, 0, kNone, false},
    {"clat_p50_seconds", kHigher, false, 0.50, kClat, false},
    {"clat_p90_seconds", kHigher, false, 0.90, kClat, false},
    {"clat_p99_seconds", kHigher, true, 0.99, kClat, false},
    {"clat_p99_9_seconds", kHigher, true, 0.999, kClat, false},
    {"lat_mean_seconds", kHigher, false, 0, kNone, true},
    {"slat_mean_seconds", kHigher, false, 0, kNone, false},
    {"lat_p50_seconds", kHigher, false, 0.50, kLat, true},
    {"lat_p90_seconds", kHigher, false, 0.90, kLat, true},
    {"lat_p99_seconds", kHigher, true, 0.99, kLat, true},
    {"lat_p99_9_seconds", kHigher, true, 0.999, kLat, true},
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
  auto add_percentile = [&](const MetricSpec& spec) {
    const LatencyHistogram* histogram = HistogramOf(stats, spec.source);
    if (histogram == nullptr || histogram->Count() == 0) return;
    add(spec.name, NsToSeconds(static_cast<double>(histogram->Percentile(spec.quantile * 100))));
  };
  for (const MetricSpec& spec : kMetrics) {
    if (spec.name == "clat_mean_seconds") {
      add(spec.name, NsToSeconds(stats.clat.Mean()));
    } else if (spec.name == "lat_mean_seconds") {
      add(spec.name, NsToSeconds(stats.lat.Mean()));
    } else if (spec.name == "slat_mean_seconds") {
      // Sync engines record no submission latency; a 0 here would be a
      // baseline of nothing, and would flag the first async run as
      // infinitely slower.
      if (stats.slat.Count() > 0) add(spec.name, NsToSeconds(stats.slat.Mean()));
    } else if (spec.quantile > 0) {
      add_percentile(spec);
    }
  }
}

}  // namespace

const LatencyHistogram* HistogramOf(const DirectionStats& stats, LatencySource source) {
  switch (source) {
    case LatencySource::kClat:
      return &stats.clat_histogram;
    case LatencySource::kLat:
      return &stats.lat_histogram;
    case LatencySource::kNone:
      break;
  }
  return nullptr;
}

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
