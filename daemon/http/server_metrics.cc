#include "daemon/http/server_metrics.h"

#include <algorithm>

namespace iowatch::daemon::http {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildGauge;
using prometheus::BuildHistogram;

prometheus::Counter& CounterOf(prometheus::Registry& registry, const std::string& name,
                               const std::string& help, const prometheus::Labels& labels = {}) {
  return BuildCounter().Name(name).Help(help).Register(registry).Add(labels);
}

// From 1 ms (a /healthz) to 10 s (a large /metrics over a slow link).
const prometheus::Histogram::BucketBoundaries& DurationBuckets() {
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  return kBuckets;
}

}  // namespace

ServerMetrics::ServerMetrics(prometheus::Registry& registry, std::vector<std::string> routes)
    : accepted(CounterOf(registry, "iowatch_http_connections_accepted_total",
                         "HTTP connections accepted (those over the limit included).")),
      rejected(CounterOf(registry, "iowatch_http_rejected_connections_total",
                         "Connections refused (503): over their address's share of "
                         "web.max_connections, or every connection busy answering.")),
      evicted(CounterOf(registry, "iowatch_http_evicted_connections_total",
                        "Connections closed before sending a whole request (or idle between "
                        "requests) to admit a newcomer when web.max_connections were open.")),
      read_timeouts(CounterOf(registry, "iowatch_http_timeouts_total",
                              "Connections closed by web.read_timeout or web.write_timeout.",
                              {{"phase", "read"}})),
      write_timeouts(CounterOf(registry, "iowatch_http_timeouts_total",
                               "Connections closed by web.read_timeout or web.write_timeout.",
                               {{"phase", "write"}})),
      idle_closes(CounterOf(registry, "iowatch_http_idle_closes_total",
                            "Keep-alive connections closed after web.idle_timeout.")),
      tls_handshake_errors(CounterOf(registry, "iowatch_http_tls_handshake_errors_total",
                                     "TLS handshakes that failed or timed out.")),
      auth_failures(CounterOf(registry, "iowatch_http_auth_failures_total",
                              "Requests answered 401 (no or wrong credentials).")),
      handler_errors(CounterOf(registry, "iowatch_http_handler_errors_total",
                               "Responses that failed in iowatch: a handler or body producer "
                               "threw, or gave an invalid status.")),
      accept_errors(CounterOf(registry, "iowatch_http_accept_errors_total",
                              "accept() failures (e.g. EMFILE); accepting resumes shortly.")),
      active_connections(BuildGauge()
                             .Name("iowatch_http_active_connections")
                             .Help("HTTP connections open now.")
                             .Register(registry)
                             .Add({})),
      routes_(std::move(routes)),
      requests_(BuildCounter()
                    .Name("iowatch_http_requests_total")
                    .Help("HTTP requests answered, by route and status code.")
                    .Register(registry)),
      durations_(BuildHistogram()
                     .Name("iowatch_http_request_duration_seconds")
                     .Help("From a request's head read to its response written, by route.")
                     .Register(registry)) {}

std::string_view ServerMetrics::RouteOf(std::string_view path) const {
  path = path.substr(0, std::min(path.find('?'), path.size()));
  const auto found = std::ranges::find(routes_, path);
  return found == routes_.end() ? std::string_view("other") : std::string_view(*found);
}

void ServerMetrics::CountResponse(std::string_view path, unsigned status) {
  requests_.Add({{"path", std::string(RouteOf(path))}, {"code", std::to_string(status)}})
      .Increment();
}

void ServerMetrics::ObserveDuration(std::string_view path, double seconds) {
  durations_.Add({{"path", std::string(RouteOf(path))}}, DurationBuckets()).Observe(seconds);
}

ServerStats ServerMetrics::Stats() const {
  const auto count = [](const prometheus::Counter& c) { return static_cast<uint64_t>(c.Value()); };
  ServerStats out;
  out.connections_accepted = count(accepted);
  out.connections_rejected = count(rejected);
  out.connections_evicted = count(evicted);
  for (const prometheus::MetricFamily& family : requests_.Collect()) {
    for (const prometheus::ClientMetric& metric : family.metric) {
      for (const auto& label : metric.label) {
        if (label.name != "code" || label.value.empty()) continue;
        const size_t status_class = std::min<size_t>(static_cast<size_t>(label.value[0] - '0'), 5);
        out.responses_by_class[status_class] += static_cast<uint64_t>(metric.counter.value);
      }
    }
  }
  out.read_timeouts = count(read_timeouts);
  out.write_timeouts = count(write_timeouts);
  out.idle_closes = count(idle_closes);
  out.tls_handshake_errors = count(tls_handshake_errors);
  out.auth_failures = count(auth_failures);
  out.handler_errors = count(handler_errors);
  out.accept_errors = count(accept_errors);
  out.active_connections = static_cast<size_t>(active_connections.Value());
  return out;
}

}  // namespace iowatch::daemon::http
