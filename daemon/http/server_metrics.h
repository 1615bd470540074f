// ServerMetrics: the HTTP server's own instrumentation, as prometheus-cpp
// counters, gauges and a histogram in a Registry the caller owns (serve
// exposes it after the sample's families): requests and their duration by
// route and status code, connections accepted, rejected, evicted and active, timeouts
// by phase, idle closes, TLS handshake errors, authentication failures,
// handler errors and accept errors. Each is counted where the event
// happens. A route label is one of the routes the server was given (e.g.
// "/metrics") or "other", so a client asking for random paths cannot grow
// the series.
// Thread-safety: prometheus-cpp's metrics are thread-safe; the server counts
// on its io_context thread and anyone may read.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>
#include <string_view>
#include <vector>

#include "daemon/http/server.h"

namespace iowatch::daemon::http {

class ServerMetrics {
 public:
  ServerMetrics(prometheus::Registry& registry, std::vector<std::string> routes);

  // A response about to be written (counted at once, so that a client that
  // has read it sees it counted), then the time it took once written.
  // `path` as requested, query or not: labelled by its route.
  void CountResponse(std::string_view path, unsigned status);
  void ObserveDuration(std::string_view path, double seconds);
  ServerStats Stats() const;

  prometheus::Counter& accepted;
  prometheus::Counter& rejected;
  prometheus::Counter& evicted;
  prometheus::Counter& read_timeouts;
  prometheus::Counter& write_timeouts;
  prometheus::Counter& idle_closes;
  prometheus::Counter& tls_handshake_errors;
  prometheus::Counter& auth_failures;
  prometheus::Counter& handler_errors;
  prometheus::Counter& accept_errors;
  prometheus::Gauge& active_connections;

 private:
  std::string_view RouteOf(std::string_view path) const;

  const std::vector<std::string> routes_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& durations_;
};

}  // namespace iowatch::daemon::http
