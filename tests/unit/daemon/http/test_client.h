// Test helpers for the HTTP server: a small synchronous HTTP(S) client (Beast
// on its own io_context, every operation under a deadline so that a server
// bug fails a test instead of hanging it), gunzip, and a poll-until helper.
// Thread-safety: one client per thread.
#pragma once

#include <zlib.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace iowatch::daemon::http::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
using ClientResponse = bhttp::response<bhttp::string_body>;
using Headers = std::vector<std::pair<std::string, std::string>>;

inline constexpr std::chrono::seconds kClientTimeout{3};

struct Reply {
  beast::error_code ec;
  ClientResponse response;
};

class TestClient {
 public:
  explicit TestClient(bool tls = false) {
    if (tls) {
      tls_context_.emplace(asio::ssl::context::tls_client);
      tls_context_->set_verify_mode(asio::ssl::verify_none);
      tls_.emplace(io_, *tls_context_);
    } else {
      plain_.emplace(io_);
    }
  }

  beast::error_code Connect(uint16_t port) {
    const tcp::endpoint endpoint(asio::ip::address_v4::loopback(), port);
    auto ec = Run([&](auto& stream, auto done) { Lowest(stream).async_connect(endpoint, done); });
    if (ec || !tls_) return ec;
    return Run([&](auto& stream, auto done) {
      if constexpr (!std::is_same_v<std::decay_t<decltype(stream)>, beast::tcp_stream>) {
        stream.async_handshake(asio::ssl::stream_base::client, done);
      }
    });
  }

  beast::error_code WriteRaw(std::string_view bytes) {
    return Run([&](auto& stream, auto done) {
      asio::async_write(stream, asio::buffer(bytes.data(), bytes.size()),
                        [done](beast::error_code ec, size_t) { done(ec); });
    });
  }

  beast::error_code Send(std::string_view method, std::string_view target,
                         const Headers& headers = {}) {
    const beast::string_view method_sv(method.data(), method.size());
    bhttp::request<bhttp::empty_body> req(bhttp::string_to_verb(method_sv),
                                          beast::string_view(target.data(), target.size()), 11);
    req.method_string(method_sv);
    req.set(bhttp::field::host, "localhost");
    for (const auto& [name, value] : headers) req.set(name, value);
    return Run([&](auto& stream, auto done) {
      bhttp::async_write(stream, req, [done](beast::error_code ec, size_t) { done(ec); });
    });
  }

  Reply Read(bool head = false) {
    bhttp::response_parser<bhttp::string_body> parser;
    parser.skip(head);
    parser.body_limit(64 << 20);
    Reply reply;
    reply.ec = Run([&](auto& stream, auto done) {
      bhttp::async_read(stream, buffer_, parser,
                        [done](beast::error_code ec, size_t) { done(ec); });
    });
    if (!reply.ec) reply.response = parser.release();
    return reply;
  }

  Reply Request(std::string_view method, std::string_view target, const Headers& headers = {}) {
    if (auto ec = Send(method, target, headers)) return Reply{ec, {}};
    return Read(method == "HEAD");
  }
  Reply Get(std::string_view target, const Headers& headers = {}) {
    return Request("GET", target, headers);
  }

  // Reads until the server closes; returns how it ended (eof, reset,
  // stream_truncated) or beast::error::timeout if it did not within the limit.
  beast::error_code ReadUntilClosed(std::chrono::milliseconds limit = kClientTimeout) {
    beast::error_code ec;
    while (!ec) {
      ec = Run(
          [&](auto& stream, auto done) {
            stream.async_read_some(buffer_.prepare(4096),
                                   [this, done](beast::error_code e, size_t n) {
                                     buffer_.commit(n);
                                     done(e);
                                   });
          },
          limit);
    }
    return ec;
  }

  void Close() {
    beast::error_code ignored;
    if (plain_) plain_->socket().close(ignored);
    if (tls_) beast::get_lowest_layer(*tls_).socket().close(ignored);
  }

 private:
  template <class Stream>
  static beast::tcp_stream& Lowest(Stream& stream) {
    return beast::get_lowest_layer(stream);
  }

  // Starts one asynchronous operation and runs the client's io_context until
  // it completes or the deadline closes the socket.
  template <class Start>
  beast::error_code Run(Start start, std::chrono::milliseconds limit = kClientTimeout) {
    beast::error_code result = asio::error::would_block;
    auto done = [&result](beast::error_code ec) { result = ec; };
    const auto with = [&](auto& stream) {
      Lowest(stream).expires_after(limit);
      start(stream, std::function<void(beast::error_code)>(done));
    };
    if (plain_) with(*plain_);
    if (tls_) with(*tls_);
    io_.restart();
    io_.run();
    return result;
  }

  asio::io_context io_;
  std::optional<asio::ssl::context> tls_context_;
  std::optional<beast::tcp_stream> plain_;
  std::optional<asio::ssl::stream<beast::tcp_stream>> tls_;
  beast::flat_buffer buffer_;
};

// Inflates a gzip stream; std::nullopt if it is not valid gzip.
inline std::optional<std::string> Gunzip(std::string_view compressed) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return std::nullopt;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  zs.avail_in = static_cast<uInt>(compressed.size());
  std::string out;
  int rc = Z_OK;
  char chunk[16384];
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof chunk;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - zs.avail_out);
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

// Polls `condition` every few milliseconds; false if it did not hold in time.
inline bool WaitFor(const std::function<bool()>& condition,
                    std::chrono::milliseconds limit = std::chrono::milliseconds(3000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace iowatch::daemon::http::testing
