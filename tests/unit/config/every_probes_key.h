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
  baseline: {runs: 7, throughput_tolerance: 0.1, latency_tolerance: 0.3, tail_tolerance: 1,
             spread_factor: 2.5, hysteresis: 2}
  defaults: {every: 5m, jitter: 30s, timeout: 20s, options: {directory: p, size: 1M}}
)";

}  // namespace iowatch::config::test_data
