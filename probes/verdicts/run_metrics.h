// The figures of a probe run that baselines compare, one list per run: for
// each direction that did I/O ("read", "write"), IOPS, bandwidth and latency
// summaries in base units (seconds, bytes per second). Each metric says which
// way is worse, so regression checks need no per-metric code.
// Thread-safety: pure functions over plain values.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "probes/run/probe_result.h"

namespace iowatch::probes {

enum class Worse { kLower, kHigher };  // throughput: lower is worse; latency: higher is worse

// The histogram a quantile metric is read from.
enum class LatencySource { kNone, kClat, kLat };

struct MetricSpec {
  std::string_view name;  // "iops", "bandwidth_bytes", "clat_mean_seconds", "clat_p99_seconds", ...
  Worse worse;
  bool is_latency_tail;  // p99 and above: gets the latency tail tolerance
  // For a percentile: the quantile (0.99 for p99) and its histogram, so the
  // sample-count and confidence-interval rules can be applied; 0 and kNone
  // for the others.
  double quantile = 0;
  LatencySource source = LatencySource::kNone;
  // Judged unless a job names its own list: throughput and total latency
  // (lat = slat + clat, what the application waits for). clat and slat are
  // kept and shown, not judged: on a fast virtio disk most io_uring reads
  // complete while io_uring_enter still submits, so clat is bimodal from run
  // to run (p50 0.44 µs in one, 68 µs in the next) while lat is stable.
  bool judged_by_default = false;
};

// Every metric a baseline keeps, in a fixed order: iops, bandwidth_bytes,
// clat_mean_seconds, clat_p50_seconds, clat_p90_seconds, clat_p99_seconds,
// clat_p99_9_seconds, lat_mean_seconds, slat_mean_seconds, lat_p50_seconds,
// lat_p90_seconds, lat_p99_seconds, lat_p99_9_seconds.
std::span<const MetricSpec> BaselineMetrics();
const MetricSpec* FindMetric(std::string_view name);

struct MetricSample {
  std::string op;      // "read" or "write"
  std::string metric;  // a BaselineMetrics() name
  double value = 0;

  bool operator==(const MetricSample&) const = default;
};

// The histogram a quantile metric reads (null for kNone).
const LatencyHistogram* HistogramOf(const DirectionStats& stats, LatencySource source);

// The metrics of each direction that completed at least one I/O (slat only
// when recorded, i.e. async engines).
std::vector<MetricSample> ExtractMetrics(const ProbeResult& result);

}  // namespace iowatch::probes
