// Internal to iowatch_http (and its fuzz target): how a request head is
// parsed and what it says about the answer; turns a Handler's Response into
// the Beast message put on the wire (status check, gzip, Content-Length or chunked framing,
// HEAD, keep-alive), and the server's own error responses.
// Thread-safety: pure functions.
#pragma once

#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <optional>
#include <string_view>

#include "daemon/http/server.h"
#include "daemon/http/stream_body.h"

namespace iowatch::daemon::http::internal {

using WireResponse = boost::beast::http::response<boost::beast::http::string_body>;

// What the request says about the shape of its response.
struct ResponseShape {
  bool head = false;  // send headers only, with the GET's Content-Length
  bool accepts_gzip = false;
  unsigned version = 11;   // 10 or 11, as the request
  bool keep_alive = true;  // false: "Connection: close" (HTTP/1.1) or none (1.0)
};

using RequestParser = boost::beast::http::request_parser<boost::beast::http::empty_body>;

// Limits a fresh parser to one request head of at most max_header_bytes and
// no body (a Content-Length > 0 fails with body_limit: 413).
void LimitRequestParser(RequestParser& parser, size_t max_header_bytes);

// What a parsed request head says about its response.
ResponseShape ShapeOf(const RequestParser::value_type& request);

// A short text/plain response, body "<status> <reason>\n" plus `detail`.
Response ErrorResponse(unsigned status, std::string_view detail = {});

// Exactly one of the two is set: `streamed` when the Response has a producer,
// its status allows a body and the request is not HEAD (chunked for HTTP/1.1,
// close-delimited for HTTP/1.0); `whole` otherwise. A HEAD of a
// streamed response is `whole`: its headers (with Content-Encoding as the GET
// would have it) and neither Content-Length nor Transfer-Encoding.
struct WireMessage {
  std::optional<WireResponse> whole;
  std::optional<StreamResponse> streamed;
};

// The message to send. `invalid_status` is set when the handler's status was
// unusable and 500 was sent instead.
WireMessage BuildWireMessage(Response response, const ResponseShape& shape,
                             bool* invalid_status = nullptr);

// RFC 9110 IMF-fixdate of the current time ("Sun, 06 Nov 1994 08:49:37 GMT").
std::string HttpDateNow();

}  // namespace iowatch::daemon::http::internal
