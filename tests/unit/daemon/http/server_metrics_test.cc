// The server's counters in a caller's prometheus-cpp registry: route labels
// stay bounded, codes are exact, durations are observed once written.
#include "daemon/http/server_metrics.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/unit/daemon/http/server_harness.h"
#include "tests/unit/daemon/http/test_client.h"

namespace iowatch::daemon::http {
namespace {

// "name{label=value,...}" -> value, for every sample of the registry.
std::map<std::string, double> Samples(const prometheus::Registry& registry) {
  std::map<std::string, double> out;
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    for (const prometheus::ClientMetric& metric : family.metric) {
      std::string key = family.name + "{";
      for (const auto& label : metric.label) key += label.name + "=" + label.value + ",";
      key += "}";
      out[key] = family.type == prometheus::MetricType::Histogram
                     ? static_cast<double>(metric.histogram.sample_count)
                     : metric.counter.value + metric.gauge.value;
    }
  }
  return out;
}

TEST(ServerMetrics, RoutesAreTheGivenOnesOrOther) {
  prometheus::Registry registry;
  ServerMetrics metrics(registry, {"/metrics", "/"});
  metrics.CountResponse("/metrics?name[]=x", 200);
  metrics.CountResponse("/", 200);
  metrics.CountResponse("/etc/passwd", 404);
  metrics.CountResponse("/../../random", 404);
  metrics.CountResponse("", 431);  // a head too large to parse has no path
  const auto samples = Samples(registry);
  EXPECT_EQ(samples.at("iowatch_http_requests_total{code=200,path=/metrics,}"), 1);
  EXPECT_EQ(samples.at("iowatch_http_requests_total{code=200,path=/,}"), 1);
  EXPECT_EQ(samples.at("iowatch_http_requests_total{code=404,path=other,}"), 2);
  EXPECT_EQ(samples.at("iowatch_http_requests_total{code=431,path=other,}"), 1);
  size_t request_series = 0;
  for (const auto& [key, value] : samples)
    request_series += key.starts_with("iowatch_http_requests_total");
  EXPECT_EQ(request_series, 4u);
  const ServerStats stats = metrics.Stats();
  EXPECT_EQ(stats.responses_by_class[2], 2u);
  EXPECT_EQ(stats.responses_by_class[4], 3u);
}

TEST(ServerMetrics, TheServerCountsIntoTheCallersRegistry) {
  prometheus::Registry registry;
  testing::ServerHarness harness;
  ServerOptions options;
  options.registry = &registry;
  options.metric_routes = {"/metrics"};
  auto server =
      harness.Start(std::move(options), [](const Request&) { return Response{.body = "x\n"}; });
  ASSERT_TRUE(server) << server.error().ToString();
  testing::TestClient client;
  ASSERT_FALSE(client.Connect((*server)->local_port()));
  ASSERT_EQ(client.Get("/metrics").response.result_int(), 200u);
  ASSERT_EQ(client.Get("/other").response.result_int(), 200u);
  EXPECT_TRUE(testing::WaitFor([&] {
    const auto samples = Samples(registry);
    return samples.contains("iowatch_http_request_duration_seconds{path=/metrics,}") &&
           samples.contains("iowatch_http_request_duration_seconds{path=other,}");
  }));
  const auto samples = Samples(registry);
  EXPECT_EQ(samples.at("iowatch_http_requests_total{code=200,path=/metrics,}"), 1);
  EXPECT_EQ(samples.at("iowatch_http_requests_total{code=200,path=other,}"), 1);
  EXPECT_EQ(samples.at("iowatch_http_connections_accepted_total{}"), 1);
  EXPECT_EQ(samples.at("iowatch_http_active_connections{}"), 1);
  EXPECT_EQ((*server)->stats().connections_accepted, 1u);
}

}  // namespace
}  // namespace iowatch::daemon::http
