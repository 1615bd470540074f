// Test helpers for the HTTP server: a small synchronous HTTP(S) client (every
// operation under a deadline, so that a server bug fails a test instead of
// hanging it), gunzip, and a poll-until helper. The client's Beast code lives
// in test_client.cc, compiled once into a test-support library: this header
// keeps Beast and OpenSSL out of every test file that uses it (they were
// most of the HTTP tests' compile time).
// Thread-safety: one client per thread.
#pragma once

#include <boost/asio/error.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace iowatch::daemon::http::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
using ErrorCode = boost::system::error_code;
using Headers = std::vector<std::pair<std::string, std::string>>;

inline constexpr std::chrono::seconds kClientTimeout{3};

// A parsed response, with the accessors of Beast's message that the tests
// read (status, body, keep-alive, a header by case-insensitive name).
class ClientResponse {
 public:
  unsigned result_int() const { return status_; }
  const std::string& body() const { return body_; }
  bool keep_alive() const { return keep_alive_; }
  // The first header called `name` (any case); "" when there is none.
  std::string operator[](std::string_view name) const;

 private:
  friend class TestClient;
  unsigned status_ = 0;
  Headers headers_;
  std::string body_;
  bool keep_alive_ = false;
};

struct Reply {
  ErrorCode ec;
  ClientResponse response;
};

class TestClient {
 public:
  explicit TestClient(bool tls = false);
  ~TestClient();
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  // Connects to 127.0.0.1:port from `from` (any 127.x.y.z: the loopback net
  // accepts them all as sources), and does the TLS handshake for a TLS client.
  ErrorCode Connect(uint16_t port, std::string_view from = "127.0.0.1");
  ErrorCode WriteRaw(std::string_view bytes);
  ErrorCode Send(std::string_view method, std::string_view target, const Headers& headers = {});
  Reply Read(bool head = false);
  Reply Request(std::string_view method, std::string_view target, const Headers& headers = {});
  Reply Get(std::string_view target, const Headers& headers = {}) {
    return Request("GET", target, headers);
  }
  // Reads until the server closes; returns how it ended (eof, reset,
  // stream_truncated) or beast::error::timeout if it did not within the limit.
  ErrorCode ReadUntilClosed(std::chrono::milliseconds limit = kClientTimeout);
  void Close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// GETs `target` from 127.0.0.1:port with blocking calls and counts the body's
// bytes as they arrive, keeping none of them: the client's memory stays flat
// however large the body. `ec` is the first error, if any.
struct DiscardedBody {
  ErrorCode ec;
  uint64_t bytes = 0;
};
DiscardedBody GetDiscardingBody(uint16_t port, std::string_view target,
                                const Headers& headers = {});

// Inflates a gzip stream; std::nullopt if it is not valid gzip.
std::optional<std::string> Gunzip(std::string_view compressed);

// Polls `condition` every few milliseconds; false if it did not hold in time.
bool WaitFor(const std::function<bool()>& condition,
             std::chrono::milliseconds limit = std::chrono::milliseconds(3000));

}  // namespace iowatch::daemon::http::testing
