// Internal to iowatch_http: StreamBody, a Beast body whose bytes come from a
// Response's BodyProducer. Beast's serializer asks the writer for the next
// buffer only once the previous one has been written to the socket, so the
// producer runs at the pace the client reads (backpressure) and a response
// holds one piece (plus, with gzip, zlib's state and its output) however long
// the body is. With gzip the pieces go through one deflate stream; what zlib
// releases is sent as it comes, so chunks vary in size and none is empty (an
// empty chunk would end a chunked body early).
//
// A producer that throws, or zlib failing, fails the write with
// boost::system::errc::io_error and sets `failed`, so the session can count
// it and abort the connection instead of ending the body cleanly.
// Thread-safety: used by one session, on the io_context thread.
#pragma once

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional.hpp>
#include <optional>
#include <string>
#include <utility>

#include "daemon/http/gzip.h"
#include "daemon/http/server.h"

namespace iowatch::daemon::http::internal {

struct StreamBody {
  struct value_type {
    BodyProducer produce;
    bool gzip = false;    // compress on the way (Content-Encoding is the caller's job)
    bool failed = false;  // set by the writer when the producer threw or zlib failed
  };

  class writer {
   public:
    using const_buffers_type = boost::asio::const_buffer;

    template <bool kIsRequest, class Fields>
    writer(boost::beast::http::header<kIsRequest, Fields>&, value_type& body) : body_(body) {}

    void init(boost::beast::error_code& ec);
    boost::optional<std::pair<const_buffers_type, bool>> get(boost::beast::error_code& ec);

   private:
    // The next non-empty output, or nothing at the end; throws on failure.
    boost::optional<std::pair<const_buffers_type, bool>> Next();
    boost::optional<std::pair<const_buffers_type, bool>> Fail(boost::beast::error_code& ec);

    value_type& body_;
    std::string piece_;   // the producer's latest piece
    std::string packed_;  // its compressed output (gzip only)
    std::optional<GzipStream> gzip_;
    bool done_ = false;  // the producer returned false
  };
};

using StreamResponse = boost::beast::http::response<StreamBody>;

}  // namespace iowatch::daemon::http::internal
