#include "tests/unit/daemon/http/test_client.h"

#include <strings.h>
#include <zlib.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <limits>
#include <thread>

namespace iowatch::daemon::http::testing {
namespace {

namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

template <class Stream>
beast::tcp_stream& Lowest(Stream& stream) {
  return beast::get_lowest_layer(stream);
}

}  // namespace

std::string ClientResponse::operator[](std::string_view name) const {
  for (const auto& [key, value] : headers_) {
    if (key.size() == name.size() && strncasecmp(key.data(), name.data(), name.size()) == 0) {
      return value;
    }
  }
  return "";
}

struct TestClient::Impl {
  // Starts one asynchronous operation and runs the client's io_context until
  // it completes or the deadline closes the socket.
  template <class Start>
  ErrorCode Run(Start start, std::chrono::milliseconds limit = kClientTimeout) {
    ErrorCode result = asio::error::would_block;
    auto done = [&result](ErrorCode ec) { result = ec; };
    const auto with = [&](auto& stream) {
      Lowest(stream).expires_after(limit);
      start(stream, std::function<void(ErrorCode)>(done));
    };
    if (plain) with(*plain);
    if (tls) with(*tls);
    io.restart();
    io.run();
    return result;
  }

  asio::io_context io;
  std::optional<asio::ssl::context> tls_context;
  std::optional<beast::tcp_stream> plain;
  std::optional<asio::ssl::stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
};

TestClient::TestClient(bool tls) : impl_(std::make_unique<Impl>()) {
  if (tls) {
    impl_->tls_context.emplace(asio::ssl::context::tls_client);
    impl_->tls_context->set_verify_mode(asio::ssl::verify_none);
    impl_->tls.emplace(impl_->io, *impl_->tls_context);
  } else {
    impl_->plain.emplace(impl_->io);
  }
}

TestClient::~TestClient() = default;

ErrorCode TestClient::Connect(uint16_t port, std::string_view from) {
  const tcp::endpoint endpoint(asio::ip::address_v4::loopback(), port);
  ErrorCode ec;
  const auto source = asio::ip::make_address_v4(std::string(from), ec);
  if (ec) return ec;
  auto ec_connect = impl_->Run([&](auto& stream, auto done) {
    auto& socket = Lowest(stream).socket();
    ErrorCode bind_ec;
    if (!socket.is_open()) socket.open(tcp::v4(), bind_ec);
    if (!bind_ec) socket.bind(tcp::endpoint(source, 0), bind_ec);
    if (bind_ec) return done(bind_ec);
    Lowest(stream).async_connect(endpoint, done);
  });
  ec = ec_connect;
  if (ec || !impl_->tls) return ec;
  return impl_->Run([&](auto& stream, auto done) {
    if constexpr (!std::is_same_v<std::decay_t<decltype(stream)>, beast::tcp_stream>) {
      stream.async_handshake(asio::ssl::stream_base::client, done);
    }
  });
}

ErrorCode TestClient::WriteRaw(std::string_view bytes) {
  return impl_->Run([&](auto& stream, auto done) {
    asio::async_write(stream, asio::buffer(bytes.data(), bytes.size()),
                      [done](ErrorCode ec, size_t) { done(ec); });
  });
}

ErrorCode TestClient::Send(std::string_view method, std::string_view target,
                           const Headers& headers) {
  const beast::string_view method_sv(method.data(), method.size());
  bhttp::request<bhttp::empty_body> req(bhttp::string_to_verb(method_sv),
                                        beast::string_view(target.data(), target.size()), 11);
  req.method_string(method_sv);
  req.set(bhttp::field::host, "localhost");
  for (const auto& [name, value] : headers) req.set(name, value);
  return impl_->Run([&](auto& stream, auto done) {
    bhttp::async_write(stream, req, [done](ErrorCode ec, size_t) { done(ec); });
  });
}

Reply TestClient::Read(bool head) {
  bhttp::response_parser<bhttp::string_body> parser;
  parser.skip(head);
  parser.body_limit(64 << 20);
  Reply reply;
  reply.ec = impl_->Run([&](auto& stream, auto done) {
    bhttp::async_read(stream, impl_->buffer, parser, [done](ErrorCode ec, size_t) { done(ec); });
  });
  if (reply.ec) return reply;
  bhttp::response<bhttp::string_body> message = parser.release();
  ClientResponse& r = reply.response;
  r.status_ = message.result_int();
  r.keep_alive_ = message.keep_alive();
  for (const auto& field : message) {
    r.headers_.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  r.body_ = std::move(message.body());
  return reply;
}

Reply TestClient::Request(std::string_view method, std::string_view target,
                          const Headers& headers) {
  if (auto ec = Send(method, target, headers)) return Reply{ec, {}};
  return Read(method == "HEAD");
}

ErrorCode TestClient::ReadUntilClosed(std::chrono::milliseconds limit) {
  ErrorCode ec;
  while (!ec) {
    ec = impl_->Run(
        [&](auto& stream, auto done) {
          stream.async_read_some(impl_->buffer.prepare(4096), [this, done](ErrorCode e, size_t n) {
            impl_->buffer.commit(n);
            done(e);
          });
        },
        limit);
  }
  return ec;
}

void TestClient::Close() {
  ErrorCode ignored;
  if (impl_->plain) impl_->plain->socket().close(ignored);
  if (impl_->tls) beast::get_lowest_layer(*impl_->tls).socket().close(ignored);
}

DiscardedBody GetDiscardingBody(uint16_t port, std::string_view target, const Headers& headers) {
  DiscardedBody out;
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect({asio::ip::address_v4::loopback(), port}, out.ec);
  if (out.ec) return out;
  bhttp::request<bhttp::empty_body> request(bhttp::verb::get,
                                            beast::string_view(target.data(), target.size()), 11);
  for (const auto& [name, value] : headers) request.set(name, value);
  bhttp::write(socket, request, out.ec);
  if (out.ec) return out;
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.body_limit(std::numeric_limits<uint64_t>::max());
  bhttp::read_header(socket, buffer, parser, out.ec);
  std::array<char, 65536> chunk;
  while (!out.ec && !parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    bhttp::read(socket, buffer, parser, out.ec);
    if (out.ec == bhttp::error::need_buffer) out.ec = {};
    out.bytes += chunk.size() - parser.get().body().size;
  }
  return out;
}

std::optional<std::string> Gunzip(std::string_view compressed) {
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

bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace iowatch::daemon::http::testing
