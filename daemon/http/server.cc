#include "daemon/http/server.h"

#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>

#include "daemon/http/bind_address.h"
#include "daemon/http/server_state.h"
#include "daemon/http/tls_context.h"

namespace iowatch::daemon::http {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using internal::ClientAddress;
using internal::ServerState;

namespace {

// After accept fails (EMFILE, ENFILE, ENOBUFS) the pending connection stays
// queued and an immediate retry would fail again: pause instead of spinning.
constexpr std::chrono::milliseconds kAcceptRetryDelay{100};

constexpr std::string_view kBusyResponse =
    "HTTP/1.1 503 Service Unavailable\r\n"
    "Content-Type: text/plain; charset=utf-8\r\n"
    "Content-Length: 36\r\n"
    "Retry-After: 1\r\n"
    "Connection: close\r\n"
    "\r\n"
    "503 Service Unavailable: too busy.\r\n";

// Over the connection limit, plain HTTP: answer 503 without reading the
// request and close. Non-blocking: a fresh socket's send buffer always has
// room for it.
void RejectBusy(tcp::socket& socket) {
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  // Discard what already arrived: closing with unread input sends a reset
  // that can destroy the 503 before the client reads it.
  char discard[4096];
  while (socket.available(ec) > 0 && !ec) socket.read_some(asio::buffer(discard), ec);
  socket.write_some(asio::buffer(kBusyResponse.data(), kBusyResponse.size()), ec);
  socket.shutdown(tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

// Whether the accepted connection gets a slot (ConnectionSlots' policy),
// after closing the waiting connection whose slot it takes, if any.
bool Admit(ServerState& state, const tcp::socket& socket) {
  boost::system::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  // Gone already: never worth a waiting connection's slot; in a free one the
  // session finds out and frees it at once.
  if (ec) return !state.slots.full();
  const auto admission = state.slots.Admit(ClientAddress(FormatEndpoint(peer)));
  if (admission.evict != 0) state.Evict(admission.evict);
  return admission.admit;
}

void AcceptNext(std::shared_ptr<ServerState> state) {
  auto& acceptor = state->acceptor;
  acceptor.async_accept(
      [state = std::move(state)](boost::system::error_code ec, tcp::socket socket) mutable {
        if (ec == asio::error::operation_aborted || !state->acceptor.is_open()) return;
        if (ec) {
          state->metrics.accept_errors.Increment();
          state->accept_retry_timer.expires_after(kAcceptRetryDelay);
          state->accept_retry_timer.async_wait([state](boost::system::error_code wait_ec) {
            if (!wait_ec && state->acceptor.is_open()) AcceptNext(state);
          });
          return;
        }
        state->metrics.accepted.Increment();
        if (!Admit(*state, socket)) {
          state->metrics.rejected.Increment();
          if (!state->tls) {
            RejectBusy(socket);
          } else if (state->busy_tls_answers < ServerState::kMaxBusyTlsAnswers) {
            // A TLS client gets a readable 503 too, after a handshake.
            internal::StartConnection(std::move(socket), state, /*busy=*/true);
          } else {
            boost::system::error_code ignored;
            socket.close(ignored);
          }
        } else {
          // Responses are written whole or in large pieces, never byte by
          // byte: Nagle's algorithm only delays them. Over TLS it held the
          // first byte of /metrics 40-50 ms, meeting the client's delayed ACK.
          boost::system::error_code ignored;
          socket.set_option(tcp::no_delay(true), ignored);
          internal::StartConnection(std::move(socket), state);
        }
        AcceptNext(std::move(state));
      });
}

std::unexpected<Error> BindError(const ServerOptions& options, uint16_t port,
                                 const boost::system::error_code& ec, std::string_view step) {
  std::string hint;
  if (ec == asio::error::address_in_use) {
    hint = fmt::format(" (is another iowatch or exporter already listening on port {}?)", port);
  } else if (ec == asio::error::access_denied) {
    hint = " (ports below 1024 need CAP_NET_BIND_SERVICE)";
  } else if (ec == boost::system::errc::address_not_available) {
    hint = " (no local interface has this address)";
  }
  return std::unexpected(Error::Io(fmt::format("cannot {} listen address {}: {}{}", step,
                                               options.listen_address, ec.message(), hint),
                                   {}, ec.value()));
}

Status OpenAcceptor(tcp::acceptor& acceptor, const ServerOptions& options,
                    const BindAddress& address) {
  boost::system::error_code ec;
  tcp::endpoint endpoint(address.address, address.port);
  acceptor.open(endpoint.protocol(), ec);
  if (ec && address.all_addresses) {  // IPv6 disabled: all IPv4 addresses
    endpoint = tcp::endpoint(asio::ip::address_v4::any(), address.port);
    acceptor.open(endpoint.protocol(), ec);
  } else if (!ec && address.all_addresses) {
    acceptor.set_option(asio::ip::v6_only(false), ec);
  }
  if (ec) return BindError(options, address.port, ec, "open a socket for");
  // Lets a restarted daemon bind while old connections sit in TIME_WAIT; a
  // live listener on the port still makes bind fail.
  acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  acceptor.bind(endpoint, ec);
  if (ec) return BindError(options, address.port, ec, "bind");
  acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return BindError(options, address.port, ec, "listen on");
  return {};
}

Status ValidateOptions(const ServerOptions& options, const Handler& handler) {
  const auto invalid = [](std::string message) {
    return MakeError(ErrorCode::kInvalidArgument, std::move(message));
  };
  if (!handler) return invalid("HTTP server: no request handler");
  if (options.max_connections == 0) return invalid("HTTP server: max_connections must be > 0");
  if (options.max_header_bytes < 256) {
    return invalid("HTTP server: max_header_bytes must be at least 256");
  }
  using std::chrono::milliseconds;
  if (options.read_timeout <= milliseconds::zero() ||
      options.write_timeout <= milliseconds::zero() ||
      options.idle_timeout <= milliseconds::zero()) {
    return invalid("HTTP server: timeouts must be positive");
  }
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return invalid("HTTPS needs both tls_cert_file and tls_key_file, or neither for plain HTTP");
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<Server>> Server::Start(asio::io_context& io, ServerOptions options,
                                              Handler handler) {
  if (auto valid = ValidateOptions(options, handler); !valid) return ErrorOf(valid);
  const auto address = ToBindAddress(options.listen_address);
  if (!address) return ErrorOf(address);

  auto state = std::make_shared<ServerState>(io, std::move(options), std::move(handler));
  if (!state->options.tls_cert_file.empty()) {
    auto tls = MakeTlsServerContext(state->options.tls_cert_file, state->options.tls_key_file);
    if (!tls) return ErrorOf(tls);
    state->tls = std::move(*tls);
  }
  std::unique_ptr<asio::thread_pool> verify_pool;
  if (!state->options.basic_auth_users.empty()) {
    auto auth = BasicAuthenticator::Create(state->options.basic_auth_users);
    if (!auth) return ErrorOf(auth);
    state->auth = std::move(*auth);
    verify_pool = std::make_unique<asio::thread_pool>(1);
    state->verify_pool = verify_pool.get();
  }
  if (auto opened = OpenAcceptor(state->acceptor, state->options, *address); !opened) {
    if (verify_pool) verify_pool->join();
    return ErrorOf(opened);
  }
  AcceptNext(state);
  return std::unique_ptr<Server>(new Server(std::move(state), std::move(verify_pool)));
}

Server::Server(std::shared_ptr<ServerState> state, std::unique_ptr<asio::thread_pool> verify_pool)
    : state_(std::move(state)), verify_pool_(std::move(verify_pool)) {}

Server::~Server() {
  // What can throw here (a timer's cancel(), an allocation in Live()) leaves
  // nothing a destructor could do about it; letting it escape would be
  // std::terminate. The io_context's own destruction still closes every socket.
  try {
    state_->server_alive = false;
    state_->on_drained = nullptr;
    state_->grace_timer.cancel();
    StopAccepting();
    CloseAll();
    state_->verify_pool = nullptr;
    if (verify_pool_) {
      // Queued verifications are dropped (their connections are closed); only
      // one already running is waited for.
      verify_pool_->stop();
      verify_pool_->join();
    }
  } catch (...) {  // NOLINT(bugprone-empty-catch): see above
  }
}

std::string Server::local_endpoint() const {
  boost::system::error_code ec;
  const auto endpoint = state_->acceptor.local_endpoint(ec);
  return ec ? std::string() : FormatEndpoint(endpoint);
}

uint16_t Server::local_port() const {
  boost::system::error_code ec;
  const auto endpoint = state_->acceptor.local_endpoint(ec);
  return ec ? 0 : endpoint.port();
}

bool Server::tls() const { return state_->tls != nullptr; }

void Server::StopAccepting() {
  if (state_->stopping) return;
  state_->stopping = true;
  boost::system::error_code ec;
  state_->acceptor.close(ec);
  state_->accept_retry_timer.cancel();
  for (const auto& connection : state_->Live()) connection->OnStopAccepting();
}

void Server::CloseAll() {
  for (const auto& connection : state_->Live()) connection->Close();
}

void Server::Shutdown(std::chrono::milliseconds grace, std::function<void()> done) {
  StopAccepting();
  state_->on_drained = std::move(done);
  if (state_->connections.empty()) {
    asio::post(state_->io, [state = state_] {
      if (auto callback = std::exchange(state->on_drained, nullptr)) callback();
    });
    return;
  }
  state_->grace_timer.expires_after(grace);
  state_->grace_timer.async_wait([state = state_](boost::system::error_code ec) {
    if (ec || !state->server_alive) return;
    for (const auto& connection : state->Live()) connection->Close();
  });
}

size_t Server::active_connections() const {
  return static_cast<size_t>(state_->metrics.active_connections.Value());
}

ServerStats Server::stats() const { return state_->metrics.Stats(); }

namespace internal {

uint64_t ServerState::Register(std::weak_ptr<Connection> connection, std::string client,
                               bool answer_busy) {
  const uint64_t id = next_connection_id++;
  if (!answer_busy) slots.Add(id, std::move(client));
  connections.emplace(id, std::move(connection));
  metrics.active_connections.Increment();
  return id;
}

std::vector<std::shared_ptr<Connection>> ServerState::Live() const {
  std::vector<std::shared_ptr<Connection>> live;
  for (const auto& [id, weak] : connections) {
    if (auto connection = weak.lock()) live.push_back(std::move(connection));
  }
  return live;
}

void ServerState::Evict(uint64_t id) {
  const auto it = connections.find(id);
  if (it == connections.end()) return;
  const auto connection = it->second.lock();
  Unregister(id);  // its destructor's Unregister then finds nothing
  metrics.evicted.Increment();
  if (connection) connection->Close();
}

void ServerState::Unregister(uint64_t id) {
  const auto it = connections.find(id);
  if (it == connections.end()) return;
  slots.Remove(id);
  connections.erase(it);
  metrics.active_connections.Decrement();
  if (connections.empty() && on_drained) {
    grace_timer.cancel();
    asio::post(io, [callback = std::exchange(on_drained, nullptr)] { callback(); });
  }
}

}  // namespace internal
}  // namespace iowatch::daemon::http
