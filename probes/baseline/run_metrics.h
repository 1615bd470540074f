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

struct MetricSpec {
  std::string_view name;  // "iops", "bandwidth_bytes", "clat_mean_seconds", "clat_p99_seconds", ...
  Worse worse;
  bool is_latency_tail;  // p99 and above: gets the latency tail tolerance
};

// Every metric a baseline keeps, in a fixed order: iops, bandwidth_bytes,
// clat_mean_seconds, clat_p50_seconds, clat_p90_seconds, clat_p99_seconds,
// clat_p99_9_seconds, lat_mean_seconds, slat_mean_seconds.
std::span<const MetricSpec> BaselineMetrics();
const MetricSpec* FindMetric(std::string_view name);

struct MetricSample {
  std::string op;      // "read" or "write"
  std::string metric;  // a BaselineMetrics() name
  double value = 0;

  bool operator==(const MetricSample&) const = default;
};

// The metrics of each direction that completed at least one I/O (slat only
// when recorded, i.e. async engines).
std::vector<MetricSample> ExtractMetrics(const ProbeResult& result);

}  // namespace iowatch::probes
