// Internal to iowatch_http: the state a Server shares with its connections.
// Connections hold it by shared_ptr, so a completion handler that runs after
// the Server is gone (its operation was cancelled by CloseAll) still finds
// valid memory; `server_alive` tells it the Server is gone.
// Thread-safety: everything except the atomics is touched only on the
// io_context thread; the atomics may be read from any thread.
#pragma once

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "daemon/http/basic_auth.h"
#include "daemon/http/server.h"

namespace iowatch::daemon::http::internal {

// What the server needs from a connection: to close it.
class Connection {
 public:
  virtual ~Connection() = default;
  virtual void Close() = 0;            // at once, cancelling everything pending
  virtual void OnStopAccepting() = 0;  // close if idle between requests
};

struct AtomicStats {
  std::atomic<uint64_t> connections_accepted{0};
  std::atomic<uint64_t> connections_rejected{0};
  std::array<std::atomic<uint64_t>, 6> responses_by_class{};
  std::atomic<uint64_t> read_timeouts{0};
  std::atomic<uint64_t> write_timeouts{0};
  std::atomic<uint64_t> idle_closes{0};
  std::atomic<uint64_t> tls_handshake_errors{0};
  std::atomic<uint64_t> auth_failures{0};
  std::atomic<uint64_t> handler_errors{0};
  std::atomic<uint64_t> accept_errors{0};
  std::atomic<size_t> active_connections{0};
};

inline void Bump(std::atomic<uint64_t>& counter) {
  counter.fetch_add(1, std::memory_order_relaxed);
}

struct ServerState {
  ServerState(boost::asio::io_context& io_context, ServerOptions server_options, Handler h)
      : io(io_context),
        options(std::move(server_options)),
        handler(std::move(h)),
        acceptor(io_context),
        accept_retry_timer(io_context),
        grace_timer(io_context) {}

  // Called by each connection once it is owned by a shared_ptr, and from its
  // destructor; the destructor call may complete a pending Shutdown.
  uint64_t Register(std::weak_ptr<Connection> connection);
  void Unregister(uint64_t id);
  // Strong references to the open connections, to call them safely while
  // closing one may unregister it.
  std::vector<std::shared_ptr<Connection>> Live() const;

  boost::asio::io_context& io;
  const ServerOptions options;
  const Handler handler;
  boost::asio::ip::tcp::acceptor acceptor;
  boost::asio::steady_timer accept_retry_timer;
  boost::asio::steady_timer grace_timer;
  std::shared_ptr<boost::asio::ssl::context> tls;   // null: plain HTTP
  std::shared_ptr<BasicAuthenticator> auth;         // null: no authentication
  boost::asio::thread_pool* verify_pool = nullptr;  // owned by Server; null once it is gone
  bool server_alive = true;
  bool stopping = false;
  std::function<void()> on_drained;  // Shutdown's `done`
  std::unordered_map<uint64_t, std::weak_ptr<Connection>> connections;
  uint64_t next_connection_id = 1;
  AtomicStats stats;
};

// Starts a connection on an accepted socket (plain or TLS per `state.tls`).
void StartConnection(boost::asio::ip::tcp::socket socket, std::shared_ptr<ServerState> state);

}  // namespace iowatch::daemon::http::internal
