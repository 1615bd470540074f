// Internal to iowatch_http: the state a Server shares with its connections.
// Connections hold it by shared_ptr, so a completion handler that runs after
// the Server is gone (its operation was cancelled by CloseAll) still finds
// valid memory; `server_alive` tells it the Server is gone.
// Thread-safety: everything except `metrics` (thread-safe) is touched only on
// the io_context thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "daemon/http/basic_auth.h"
#include "daemon/http/connection_slots.h"
#include "daemon/http/server.h"
#include "daemon/http/server_metrics.h"

namespace iowatch::daemon::http::internal {

// What the server needs from a connection: to close it.
class Connection {
 public:
  virtual ~Connection() = default;
  virtual void Close() = 0;            // at once, cancelling everything pending
  virtual void OnStopAccepting() = 0;  // close if idle between requests
};

// "192.0.2.1" of "192.0.2.1:5000", "[2001:db8::1]" of "[2001:db8::1]:5000":
// the client whose connections and password checks are bounded.
inline std::string ClientAddress(std::string_view remote) {
  return std::string(remote.substr(0, remote.rfind(':')));
}

// bcrypt verifications queued for or running on the one verify thread, per
// client address. With one queue for all, 60 connections sending wrong
// passwords delayed a legitimate login by 3.3 s (found by adversarial testing);
// bounded, a client waits for at most kTotal verifications, one per client.
// A request over a bound is answered 429 at once, without bcrypt.
class VerificationQueue {
 public:
  static constexpr uint32_t kPerClient = 1;
  static constexpr uint32_t kTotal = 8;

  bool TryStart(const std::string& client) {
    uint32_t& mine = per_client_[client];
    if (mine >= kPerClient || total_ >= kTotal) {
      if (mine == 0) per_client_.erase(client);
      return false;
    }
    ++mine;
    ++total_;
    return true;
  }
  void Finish(const std::string& client) {
    const auto it = per_client_.find(client);
    if (it == per_client_.end()) return;
    if (--it->second == 0) per_client_.erase(it);
    --total_;
  }
  uint32_t Pending() const { return total_; }

 private:
  std::unordered_map<std::string, uint32_t> per_client_;
  uint32_t total_ = 0;
};

struct ServerState {
  ServerState(boost::asio::io_context& io_context, ServerOptions server_options, Handler h)
      : io(io_context),
        options(std::move(server_options)),
        handler(std::move(h)),
        own_registry(options.registry == nullptr ? std::make_unique<prometheus::Registry>()
                                                 : nullptr),
        metrics(options.registry != nullptr ? *options.registry : *own_registry,
                options.metric_routes),
        slots(options.max_connections),
        acceptor(io_context),
        accept_retry_timer(io_context),
        grace_timer(io_context) {}

  // Called by each connection once it is owned by a shared_ptr, and from its
  // destructor; the destructor call may complete a pending Shutdown.
  // `client` is its ClientAddress. A connection takes a slot (`slots`)
  // unless `answer_busy`: a TLS connection over the cap, answered 503.
  uint64_t Register(std::weak_ptr<Connection> connection, std::string client, bool answer_busy);
  void Unregister(uint64_t id);
  // The connection waits for its peer (its request head, or the next
  // keep-alive request), or answers a request or closes: slots.SetWaiting.
  void SetWaiting(uint64_t id, bool waiting) { slots.SetWaiting(id, waiting); }
  // Unregisters a waiting connection at once, so its slot is free for the
  // newcomer that Admit chose it for, and closes it.
  void Evict(uint64_t id);
  // Strong references to the open connections, to call them safely while
  // closing one may unregister it.
  std::vector<std::shared_ptr<Connection>> Live() const;

  boost::asio::io_context& io;
  const ServerOptions options;
  const Handler handler;
  const std::unique_ptr<prometheus::Registry> own_registry;  // when options.registry is null
  ServerMetrics metrics;
  ConnectionSlots slots;  // who holds max_connections, and who gives way
  boost::asio::ip::tcp::acceptor acceptor;
  boost::asio::steady_timer accept_retry_timer;
  boost::asio::steady_timer grace_timer;
  std::shared_ptr<boost::asio::ssl::context> tls;   // null: plain HTTP
  std::shared_ptr<BasicAuthenticator> auth;         // null: no authentication
  boost::asio::thread_pool* verify_pool = nullptr;  // owned by Server; null once it is gone
  VerificationQueue verifications;
  // TLS connections over max_connections being answered 503 (each needs a
  // handshake); beyond kMaxBusyTlsAnswers they are just closed.
  static constexpr uint32_t kMaxBusyTlsAnswers = 16;
  uint32_t busy_tls_answers = 0;
  bool server_alive = true;
  bool stopping = false;
  std::function<void()> on_drained;  // Shutdown's `done`
  // Every open connection, those answered 503 included (for CloseAll).
  std::unordered_map<uint64_t, std::weak_ptr<Connection>> connections;
  uint64_t next_connection_id = 1;
};

// Starts a connection on an accepted socket (plain or TLS per `state.tls`).
// `busy` (TLS only): answer the first request 503 and close.
void StartConnection(boost::asio::ip::tcp::socket socket, std::shared_ptr<ServerState> state,
                     bool busy = false);

}  // namespace iowatch::daemon::http::internal
