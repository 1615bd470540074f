// A request as the server reads it: the bytes go through the same Beast parser
// with the same limits (LimitRequestParser), then what the server derives from
// a parsed head: the response shape (HEAD, gzip, version, keep-alive), the
// basic-auth credentials, the route label of the request counter and the
// answer put on the wire. Whatever the request, the route label is one of the
// server's routes or "other" (a hostile path adds no series), and the answer
// is a whole message whose HEAD variant has no body.
#include <prometheus/registry.h>

#include <boost/asio/buffer.hpp>
#include <set>
#include <string>

#include "daemon/http/basic_auth.h"
#include "daemon/http/message.h"
#include "daemon/http/server_metrics.h"
#include "tests/fuzz/fuzz_input.h"

namespace http = iowatch::daemon::http;
using iowatch::fuzz::Require;

namespace {

const std::vector<std::string> kRoutes = {"/metrics", "/", "/healthz"};

void CheckRouteLabels(prometheus::Registry& registry) {
  const std::set<std::string> allowed = {"/metrics", "/", "/healthz", "other"};
  for (const auto& family : registry.Collect()) {
    for (const auto& metric : family.metric) {
      for (const auto& label : metric.label) {
        if (label.name == "path") Require(allowed.contains(label.value));
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  http::internal::RequestParser parser;
  http::internal::LimitRequestParser(parser, 8192);
  parser.eager(true);
  boost::beast::error_code ec;
  size_t offset = 0;
  while (offset < size && !parser.is_header_done() && !ec) {
    const size_t used = parser.put(boost::asio::buffer(data + offset, size - offset), ec);
    if (ec == boost::beast::http::error::need_more) break;  // the server would read on
    if (used == 0) break;
    offset += used;
  }
  if (ec || !parser.is_header_done()) return 0;
  const auto& request = parser.get();
  const http::internal::ResponseShape shape = http::internal::ShapeOf(request);
  const auto authorization = request[boost::beast::http::field::authorization];
  (void)http::ParseBasicAuthorization(std::string_view(authorization.data(), authorization.size()));

  prometheus::Registry registry;
  http::ServerMetrics metrics(registry, kRoutes);
  const auto target = request.target();
  metrics.CountResponse(std::string_view(target.data(), target.size()), 404);
  CheckRouteLabels(registry);

  const auto message = http::internal::BuildWireMessage(http::internal::ErrorResponse(404), shape);
  Require(message.whole.has_value() && !message.streamed.has_value());
  if (shape.head) Require(message.whole->body().empty());
  return 0;
}
