// Every key of the probes section but `jobs`, with non-default values: the
// every-key test counts them, probes_config_test checks each value.
#pragma once

namespace iowatch::config::test_data {

inline constexpr char kEveryProbesKeyButJobs[] = R"(
probes:
  enabled: false
  max_concurrent: 2
  busy_threshold: 0.25
  busy_window: 2m
  busy_retry: 30s
  max_skips: 3
  retention: 30d
  baseline:
    runs: 7
    throughput_tolerance: 0.1
    latency_tolerance: 0.3
    tail_tolerance: 1
    spread_factor: 2.5
    hysteresis: 2
    min_bad_span: 1m30s
    min_age: 30m
    throughput_spread_floor: 0.02
    latency_spread_floor: 0.5
    tail_spread_floor: 1.5
    quantile_samples: 20
    quantile_confidence: 0.95
    metrics: [lat_p99_seconds, iops]
    contention:
      max_foreign_share: 0.2
      max_foreign_iops_ratio: 2.5
      min_foreign_load: 75
      max_cpu_wait: 0.5
      max_cpu_steal: 0.3
      max_quantile: 0.9
      before: 2500ms
      bands: false
  defaults: {every: 5m, jitter: 30s, timeout: 20s, options: {directory: p, size: 1M}}
)";

}  // namespace iowatch::config::test_data
