#include "daemon/http/message.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <ctime>

#include "daemon/http/gzip.h"

namespace iowatch::daemon::http::internal {
namespace bhttp = boost::beast::http;

namespace {

bool HasLineBreak(std::string_view s) { return s.find_first_of("\r\n") != std::string_view::npos; }

bool NoBodyAllowed(unsigned status) { return status == 204 || status == 304; }

}  // namespace

void LimitRequestParser(RequestParser& parser, size_t max_header_bytes) {
  parser.header_limit(static_cast<std::uint32_t>(std::min<size_t>(max_header_bytes, UINT32_MAX)));
  parser.body_limit(0);
}

ResponseShape ShapeOf(const RequestParser::value_type& request) {
  const auto accept_encoding = request[boost::beast::http::field::accept_encoding];
  return ResponseShape{
      request.method() == boost::beast::http::verb::head,
      AcceptsGzip(std::string_view(accept_encoding.data(), accept_encoding.size())),
      request.version(), request.keep_alive()};
}

Response ErrorResponse(unsigned status, std::string_view detail) {
  Response r;
  r.status = status;
  const auto reason = bhttp::obsolete_reason(bhttp::int_to_status(status));
  r.body = fmt::format("{} {}\n{}", status, std::string_view(reason.data(), reason.size()), detail);
  if (!detail.empty() && detail.back() != '\n') r.body.push_back('\n');
  return r;
}

namespace {

// Status, extra headers, Date, Content-Type and Vary: everything but framing
// and Content-Encoding, which the caller decides.
template <class Body>
void SetHeaders(bhttp::response<Body>& res, const Response& response, const ResponseShape& shape) {
  res.version(shape.version);
  res.result(response.status);
  for (const auto& [name, value] : response.headers) {
    if (name.empty() || HasLineBreak(name) || HasLineBreak(value)) continue;
    res.insert(name, value);
  }
  res.set(bhttp::field::date, HttpDateNow());
  if (!response.content_type.empty() && !HasLineBreak(response.content_type)) {
    res.set(bhttp::field::content_type, response.content_type);
  }
  res.erase(bhttp::field::content_encoding);
  res.erase(bhttp::field::transfer_encoding);
  res.erase(bhttp::field::content_length);
  if (response.compressible) res.set(bhttp::field::vary, "Accept-Encoding");
}

StreamResponse BuildStreamed(Response response, const ResponseShape& shape) {
  StreamResponse res;
  SetHeaders(res, response, shape);
  const bool gzip = response.compressible && shape.accepts_gzip;
  if (gzip) res.set(bhttp::field::content_encoding, "gzip");
  res.body().produce = std::move(response.stream);
  res.body().gzip = gzip;
  if (shape.version >= 11) {
    res.chunked(true);
    res.keep_alive(shape.keep_alive);
  } else {
    // HTTP/1.0 has no chunks: the end of the connection is the end of the body.
    res.keep_alive(false);
  }
  return res;
}

}  // namespace

WireMessage BuildWireMessage(Response response, const ResponseShape& shape, bool* invalid_status) {
  if (invalid_status != nullptr) *invalid_status = false;
  if (response.status < 200 || response.status > 599) {
    if (invalid_status != nullptr) *invalid_status = true;
    response = ErrorResponse(500, fmt::format("handler returned status {}", response.status));
  }
  const bool streamed = response.stream && !NoBodyAllowed(response.status);
  if (streamed && !shape.head) return {std::nullopt, BuildStreamed(std::move(response), shape)};

  WireResponse res;
  SetHeaders(res, response, shape);
  std::string body = std::move(response.body);
  if (streamed) {
    // HEAD: the GET's headers; its length is not known without rendering it.
    if (response.compressible && shape.accepts_gzip) {
      res.set(bhttp::field::content_encoding, "gzip");
    }
  } else if (NoBodyAllowed(response.status)) {
    body.clear();
  } else {
    if (response.compressible && shape.accepts_gzip && body.size() >= kGzipMinBytes) {
      if (auto compressed = GzipCompress(body)) {
        body = std::move(*compressed);
        res.set(bhttp::field::content_encoding, "gzip");
      }
    }
    res.content_length(body.size());
  }
  if (!shape.head) res.body() = std::move(body);
  res.keep_alive(shape.keep_alive);
  return {std::move(res), std::nullopt};
}

std::string HttpDateNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  // Fails only for a year that does not fit an int: the epoch's date then.
  (void)gmtime_r(&now, &tm);
  // strftime's %a and %b are locale-dependent; HTTP needs the English names.
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  return fmt::format("{}, {:02d} {} {:04d} {:02d}:{:02d}:{:02d} GMT", kDays[tm.tm_wday], tm.tm_mday,
                     kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

}  // namespace iowatch::daemon::http::internal
