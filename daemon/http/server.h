// Server: the daemon's HTTP(S) endpoint for /metrics, / and /healthz. An
// asynchronous Boost.Beast server on an io_context the caller owns and runs,
// the same one that drives the sampling timer and signals, so nothing here
// blocks it: every socket operation is asynchronous, bcrypt runs on a private
// worker thread, and every resource is bounded (connections, request head
// size, time to send the head, to write the response, to start the next
// request). Only GET and HEAD are served, without request bodies; responses
// are gzip-compressed when the client accepts it. A response either carries
// its whole body (sent with Content-Length) or a producer that the server
// pulls one piece at a time, each only once the previous one is on the wire
// (sent chunked, or close-delimited to HTTP/1.0 clients), so that a large
// body costs one piece of memory per connection, not its size. Routing is
// the Handler's job.
//
// Graceful shutdown: Shutdown(grace, done), or by hand StopAccepting(), wait
// until active_connections() is 0 or a grace period passed, then CloseAll().
//
// Thread-safety: the io_context must be run by one thread. Start() may be
// called before that thread runs; afterwards every method except
// active_connections(), stats(), local_endpoint() and local_port() (which are
// safe from any thread), and the destructor, must be called on it. The
// Server must be destroyed before the io_context.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

// Forward declarations keep Asio's headers out of the daemon's other files.
namespace boost::asio {
class io_context;
class thread_pool;
}  // namespace boost::asio
namespace prometheus {
class Registry;
}  // namespace prometheus

namespace iowatch::daemon::http {

struct Request {
  std::string method{};       // "GET" or "HEAD"; the server answers anything else with 405
  std::string target{};       // as sent: path and query, e.g. "/metrics?x=1"
  bool accepts_gzip = false;  // informational: the server compresses by itself
  std::string remote{};       // peer "ip:port"
  std::string user{};         // the Basic auth user, empty without auth
};

// Appends the next piece of a streamed body to `out` (which arrives empty,
// with kStreamPieceBytes of capacity) and returns false once that was the
// last piece. Pieces of about that size keep syscalls and chunk framing cheap
// without reallocating; an empty piece with `true` is allowed but wasteful.
// Called on the io_context thread, like the Handler, and under the same
// rules. An exception aborts the connection: the status line is already
// out, so the client sees a truncated body (a chunked body without its last
// chunk, or a reset), never a complete one.
using BodyProducer = std::function<bool(std::string& out)>;

inline constexpr size_t kStreamPieceBytes = size_t{64} * 1024;

struct Response {
  unsigned status = 200;                                   // 200..599; anything else is sent as 500
  std::string content_type = "text/plain; charset=utf-8";  // empty: no Content-Type
  std::string body{};  // the server drops it for HEAD but keeps its Content-Length
  std::vector<std::pair<std::string, std::string>> headers{};  // extra; no CR/LF, framing is ours
  bool compressible = true;  // gzip when the client accepts it and body >= kGzipMinBytes
  // Set: the body comes from here instead of `body` (gzip whenever accepted
  // and compressible: the size is not known in advance). HEAD never calls it.
  BodyProducer stream{};
};

// Called on the io_context thread for every authorised GET/HEAD request. It
// must be quick and must not block (no file or network I/O, no waiting on a
// lock held by a slow thread): render from an already-published snapshot.
// An exception becomes a 500 and is counted.
using Handler = std::function<Response(const Request&)>;

struct ServerOptions {
  // "127.0.0.1:9860", "[::1]:9860", ":9860" (all addresses); port 0 = ephemeral.
  std::string listen_address = ":9860";
  // The TLS handshake and the whole request head must arrive within this
  // (slowloris defence); a connection that sends nothing is closed after it.
  // Much shorter than idle_timeout by default: a client that has not sent a
  // request yet gets less patience than one that has been answered.
  std::chrono::milliseconds read_timeout{10000};
  std::chrono::milliseconds write_timeout{10000};  // to send one whole response
  std::chrono::milliseconds idle_timeout{60000};   // keep-alive wait for the next request
  // Connections open at once. One client address may hold three quarters
  // of them (all below 4): the rest stays for other addresses. When all are
  // open, a newcomer takes the slot of a connection that is waiting (for its
  // request head, or idle between requests) if its address holds none, or
  // two fewer than the waiter's: the longest-waiting connection of the
  // address holding the most (connection_slots.h); one answering a request
  // is never closed for it. Otherwise the newcomer gets "503" and is closed
  // (over TLS after a handshake, or just closed when many are). Nothing
  // queues in the server.
  size_t max_connections = 64;
  // A larger request line plus headers gets 431 and the connection closed.
  // Request bodies are refused with 413 (GET and HEAD need none).
  size_t max_header_bytes = 8192;
  // Both set: HTTPS only (TLS 1.2+). One set without the other is an error.
  std::string tls_cert_file{};
  std::string tls_key_file{};
  // Non-empty: every request needs Basic auth with one of these users
  // (user -> bcrypt hash), else 401 with WWW-Authenticate.
  std::map<std::string, std::string> basic_auth_users{};
  // Where the server counts its requests, connections and errors
  // (server_metrics.h); null: in a registry of its own (stats() works either
  // way). Must outlive the Server.
  prometheus::Registry* registry = nullptr;
  // Request paths counted under their own name in the metrics' "path" label;
  // any other path is "other".
  std::vector<std::string> metric_routes{};
};

// The server's counters since Start (ServerMetrics' values), for tests and logs.
struct ServerStats {
  uint64_t connections_accepted = 0;
  uint64_t connections_rejected = 0;             // over max_connections or the address's share
  uint64_t connections_evicted = 0;              // waiting for a request, closed to admit another
  std::array<uint64_t, 6> responses_by_class{};  // [2] = 2xx ... [5] = 5xx
  uint64_t read_timeouts = 0;  // request head (or TLS handshake) not complete in read_timeout
  uint64_t write_timeouts = 0;
  uint64_t idle_closes = 0;  // keep-alive connections closed after idle_timeout
  uint64_t tls_handshake_errors = 0;
  uint64_t auth_failures = 0;   // 401 answers
  uint64_t handler_errors = 0;  // the handler or a body producer threw, or an invalid status
  uint64_t accept_errors = 0;   // e.g. EMFILE; accepting resumes after a short pause
  size_t active_connections = 0;
};

namespace internal {
struct ServerState;
}

class Server {
 public:
  // Validates the options, loads the TLS files, binds and listens at once
  // (so "address already in use" is a start-up error) and starts accepting.
  // Errors name the address, port or file they are about.
  static Result<std::unique_ptr<Server>> Start(boost::asio::io_context& io, ServerOptions options,
                                               Handler handler);

  // StopAccepting(), CloseAll() and stops the bcrypt worker.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  std::string local_endpoint() const;  // the bound "ip:port", port 0 resolved
  uint16_t local_port() const;
  bool tls() const;

  // Graceful shutdown, step 1: closes the listening socket. Requests in
  // flight complete (their responses say "Connection: close"); connections
  // idling between keep-alive requests are closed now.
  void StopAccepting();
  // Step 2, after a grace period of the caller's choice: closes every
  // remaining connection at once.
  void CloseAll();
  // Both steps: StopAccepting(), then CloseAll() after `grace` unless every
  // connection finished earlier; `done` runs on the io_context thread once
  // no connection is left (unless the Server is destroyed first).
  void Shutdown(std::chrono::milliseconds grace, std::function<void()> done);

  size_t active_connections() const;
  ServerStats stats() const;

 private:
  Server(std::shared_ptr<internal::ServerState> state,
         std::unique_ptr<boost::asio::thread_pool> verify_pool);

  std::shared_ptr<internal::ServerState> state_;
  std::unique_ptr<boost::asio::thread_pool> verify_pool_;  // bcrypt, off the io thread
};

}  // namespace iowatch::daemon::http
