#include "tests/bench/fleet/full_resolution_run.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "probes/stats/latency_histogram.h"

namespace iowatch::fleet {
namespace {

constexpr double kSeconds = 3;  // DiurnalDisk's runtime
constexpr uint64_t kProbeBytes = 4096;
constexpr uint64_t kForeignBytes = 16384;

// `ios` I/Os of `lat_ns` each: what FillEqualLatencies leaves in the direction.
void FillSummary(probes::DirectionStats& d, uint64_t ios, uint64_t lat_ns) {
  d.ios = ios;
  d.bytes = ios * kProbeBytes;
  d.lat = probes::RunningStats::FromSummary(ios, lat_ns, lat_ns, static_cast<double>(lat_ns), 0);
  d.clat = d.lat;
  std::vector<uint64_t> buckets(probes::LatencyHistogram::BucketCount(), 0);
  buckets[probes::LatencyHistogram::BucketIndex(lat_ns)] = ios;
  d.lat_histogram.AssignBuckets(buckets);
  d.clat_histogram.AssignBuckets(buckets);
}

}  // namespace

probes::RunRecord FullResolution(probes::RunRecord run) {
  probes::DirectionStats& d = run.result.read;
  // DiurnalDisk keeps whole nanoseconds: floor(floor(x · k) / k) = floor(x).
  const uint64_t slow_ns = d.lat.Min();
  if (d.ios == 0) std::abort();  // a run kScale times slower than 3 s: kScale is too large
  const uint64_t lat_ns = slow_ns / kScale;
  const double lat_us = (static_cast<double>(slow_ns) + 0.5) / (1000.0 * kScale);
  const auto ios = static_cast<uint64_t>(kSeconds * 1e6 / lat_us);
  probes::RunConditions& c = *run.conditions;
  const uint64_t foreign = c.device_ios - c.own_requests;
  FillSummary(d, ios, lat_ns);
  run.metrics = probes::ExtractMetrics(run.result);
  c.own_requests = d.ios;
  c.own_bytes = d.bytes;
  c.device_ios = d.ios + foreign;
  c.device_bytes = d.bytes + foreign * kForeignBytes;
  return run;
}

std::string CheckSameRun(const probes::RunRecord& fast, const probes::RunRecord& direct) {
  const auto near = [](double a, double b, double tolerance) {
    return std::abs(a - b) <= tolerance * std::max(std::abs(a), std::abs(b)) + 1e-12;
  };
  const uint64_t a = fast.result.read.ios, b = direct.result.read.ios;
  if ((a > b ? a - b : b - a) > 1) return fmt::format("ios {} vs {}", a, b);
  if (!fast.conditions || !direct.conditions) return "conditions missing";
  const probes::RunConditions &x = *fast.conditions, &y = *direct.conditions;
  if (x.device_ios - x.own_requests != y.device_ios - y.own_requests ||
      x.cpu_steal != y.cpu_steal) {
    return "conditions differ";
  }
  if (fast.metrics.size() != direct.metrics.size()) return "metric count differs";
  for (size_t i = 0; i < fast.metrics.size(); ++i) {
    const probes::MetricSample &m = fast.metrics[i], &n = direct.metrics[i];
    if (m.metric != n.metric || !near(m.value, n.value, 1e-4)) {
      return fmt::format("{} {} vs {}", m.metric, m.value, n.value);
    }
  }
  return "";
}

}  // namespace iowatch::fleet
