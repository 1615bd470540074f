#include "daemon/metrics/self_metrics.h"

#include "common/version.h"
#include "daemon/metrics/exposition.h"

namespace iowatch::daemon {

// Families in name order, as the snapshot's (a test checks).
std::string RenderSelfMetrics(const SelfState& s) {
  std::string out;
  ExpositionWriter w(out);
  w.Family("iowatch_build_info", "gauge", "Version and compiler of the running binary (always 1).");
  w.Sample({{"version", kVersion}, {"compiler", __VERSION__}}, 1);
  w.Family("iowatch_config_last_reload_success_timestamp_seconds", "gauge",
           "When the configuration was last loaded successfully.");
  w.Sample({}, s.reload.last_success_timestamp_seconds);
  w.Family("iowatch_config_last_reload_successful", "gauge",
           "1 when the last configuration (re)load succeeded.");
  w.Sample({}, s.reload.last_successful ? 1 : 0);
  w.Family("iowatch_http_rejected_connections_total", "counter",
           "Connections refused because max_connections were open.");
  w.SampleInt({}, s.http.rejected_connections);
  w.Family("iowatch_http_requests_total", "counter", "HTTP requests answered, by status class.");
  w.SampleInt({{"code", "2xx"}}, s.http.requests_2xx);
  w.SampleInt({{"code", "4xx"}}, s.http.requests_4xx);
  w.SampleInt({{"code", "5xx"}}, s.http.requests_5xx);
  w.Family("iowatch_http_timeouts_total", "counter",
           "Connections closed by a read or write timeout.");
  w.SampleInt({}, s.http.timeouts);
  w.Family("iowatch_sample_age_seconds", "gauge", "Age of the sample served, at scrape time.");
  w.Sample({}, s.last_sample_age_seconds);
  w.Family("iowatch_sample_lag_seconds", "gauge",
           "How late the last sample started against its schedule (event loop delay).");
  w.Sample({}, s.sample_lag_seconds);
  if (s.process) {
    const ProcessStats& p = *s.process;
    w.Family("process_cpu_seconds_total", "counter", "User and system CPU time of iowatch.");
    w.Sample({}, p.cpu_seconds);
    w.Family("process_max_fds", "gauge", "File descriptor limit of iowatch.");
    w.SampleInt({}, p.max_fds);
    w.Family("process_open_fds", "gauge", "Open file descriptors of iowatch.");
    w.SampleInt({}, p.open_fds);
    w.Family("process_resident_memory_bytes", "gauge", "Resident memory of iowatch.");
    w.SampleInt({}, p.resident_bytes);
    w.Family("process_start_time_seconds", "gauge",
             "Start time of iowatch, seconds since the epoch.");
    w.Sample({}, p.start_time_seconds);
    w.Family("process_virtual_memory_bytes", "gauge", "Virtual memory of iowatch.");
    w.SampleInt({}, p.virtual_bytes);
  }
  return out;
}

}  // namespace iowatch::daemon
