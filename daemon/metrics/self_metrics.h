// Metrics about iowatch itself, rendered at scrape time (they change between
// samples): build info, the standard process_* family, config reload status
// and the HTTP server's counters.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "daemon/metrics/process_stats.h"

namespace iowatch::daemon {

struct ReloadStatus {
  bool last_successful = true;
  double last_success_timestamp_seconds = 0;
};

struct HttpCounters {
  uint64_t requests_2xx = 0, requests_4xx = 0, requests_5xx = 0;
  uint64_t rejected_connections = 0;  // over the connection limit
  uint64_t timeouts = 0;
};

struct SelfState {
  std::optional<ProcessStats> process;
  ReloadStatus reload;
  HttpCounters http;
  double last_sample_age_seconds = 0;
  double sample_lag_seconds = 0;  // how late the last sample started against its schedule
};

std::string RenderSelfMetrics(const SelfState& state);

}  // namespace iowatch::daemon
