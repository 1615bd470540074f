// One HTTP connection, plain or TLS: read a request head (bounded in size and
// time), authorise, answer, repeat while keep-alive. Every wait on the peer is
// asynchronous and has a deadline (beast::tcp_stream::expires_after, which
// closes the socket when it passes); the write deadline covers a whole
// response, streamed or not, so a client that stops reading a stream is
// dropped like one that stops reading a whole body.
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <chrono>
#include <optional>

#include "daemon/http/bind_address.h"
#include "daemon/http/gzip.h"
#include "daemon/http/message.h"
#include "daemon/http/server_state.h"

namespace iowatch::daemon::http::internal {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

namespace {

// The first read of a keep-alive request, before its head deadline starts.
constexpr size_t kFirstReadBytes = 4096;
// After an answer that ends the connection, unread input is drained for at
// most this long (and this much) before closing, so that the peer receives
// the answer instead of a reset caused by data it sent that we never read.
constexpr std::chrono::milliseconds kMaxLinger{1000};
constexpr size_t kMaxLingerBytes = size_t{256} * 1024;

// kHead: reading a request head (or the TLS handshake); kIdle: waiting for
// the next keep-alive request; kBusy: a request is being answered.
enum class Phase { kHead, kIdle, kBusy, kClosing };

bool IsParseError(const beast::error_code& ec) {
  static const auto& category = bhttp::make_error_code(bhttp::error::bad_method).category();
  return ec.category() == category && ec != bhttp::error::end_of_stream &&
         ec != bhttp::error::partial_message;
}

template <class Stream>
class Session final : public Connection, public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  template <class... StreamArgs>
  Session(std::shared_ptr<ServerState> state, std::string remote, StreamArgs&&... stream_args)
      : state_(std::move(state)),
        remote_(std::move(remote)),
        stream_(std::forward<StreamArgs>(stream_args)...) {}

  ~Session() override {
    state_->Unregister(id_);
    if (busy_) --state_->busy_tls_answers;
  }

  // Over max_connections on TLS: the 503 needs a handshake, so the session
  // does one, reads the request head (closing with it unread would reset the
  // connection before the client reads the answer) and answers 503.
  void AnswerBusy() {
    busy_ = true;
    ++state_->busy_tls_answers;
  }

  void Run() {
    id_ = state_->Register(this->weak_from_this(), ClientAddress(), busy_);
    Lowest().expires_after(state_->options.read_timeout);
    if constexpr (kTls) {
      stream_.async_handshake(asio::ssl::stream_base::server,
                              beast::bind_front_handler(&Session::OnHandshake, Self()));
    } else {
      ReadNext(/*first=*/true);
    }
  }

  void Close() override {
    SetPhase(Phase::kClosing);
    closed_ = true;
    Lowest().close();
  }

  void OnStopAccepting() override {
    if (phase_ == Phase::kIdle) Close();
  }

 private:
  std::shared_ptr<Session> Self() { return this->shared_from_this(); }

  // Waiting for the peer (a head, or the next request), this connection may
  // give its slot to a newcomer when the server is full; answering or
  // closing, it may not.
  void SetPhase(Phase phase) {
    phase_ = phase;
    state_->SetWaiting(id_, phase == Phase::kHead || phase == Phase::kIdle);
  }
  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }

  void OnHandshake(beast::error_code ec) {
    if (closed_) return;
    if (ec) {
      if (ec == beast::error::timeout) state_->metrics.read_timeouts.Increment();
      state_->metrics.tls_handshake_errors.Increment();
      Close();
      return;
    }
    ReadNext(/*first=*/true);
  }

  // The head of a new connection's first request must arrive within
  // read_timeout; a keep-alive connection may idle for idle_timeout first.
  void ReadNext(bool first) {
    request_ = Request{};
    shape_ = ResponseShape{};
    parser_.emplace();
    LimitRequestParser(*parser_, state_->options.max_header_bytes);
    if (first || buffer_.size() > 0) {
      ReadHead();
      return;
    }
    SetPhase(Phase::kIdle);
    Lowest().expires_after(state_->options.idle_timeout);
    stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                            beast::bind_front_handler(&Session::OnFirstBytes, Self()));
  }

  void OnFirstBytes(beast::error_code ec, size_t n) {
    if (closed_) return;
    if (ec) {
      if (ec == beast::error::timeout) state_->metrics.idle_closes.Increment();
      Close();
      return;
    }
    buffer_.commit(n);
    ReadHead();
  }

  void ReadHead() {
    SetPhase(Phase::kHead);
    Lowest().expires_after(state_->options.read_timeout);
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             beast::bind_front_handler(&Session::OnHead, Self()));
  }

  void OnHead(beast::error_code ec, size_t) {
    if (closed_) return;
    SetPhase(Phase::kBusy);
    request_started_ = std::chrono::steady_clock::now();
    // A body announced by Content-Length (over the limit of 0) or chunked.
    const bool has_body = ec == bhttp::error::body_limit || (!ec && !parser_->is_done());
    if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
      Send(ErrorResponse(431), /*close=*/true);
    } else if (has_body) {
      Send(ErrorResponse(413, "request bodies are not accepted"), true);
    } else if (IsParseError(ec)) {
      Send(ErrorResponse(400, ec.message()), true);
    } else if (ec) {
      if (ec == beast::error::timeout) state_->metrics.read_timeouts.Increment();
      Close();  // peer closed, reset, timed out, or we were closed
    } else {
      OnRequest();
    }
  }

  void OnRequest() {
    if (busy_) {
      Response r = ErrorResponse(503, "too busy");
      r.headers.emplace_back("Retry-After", "1");
      Send(std::move(r), /*close=*/true);
      return;
    }
    const auto& req = parser_->get();
    const auto method = req.method_string();
    const auto target = req.target();
    request_ = Request{std::string(method.data(), method.size()),
                       std::string(target.data(), target.size()),
                       false,
                       remote_,
                       {}};
    shape_ = ShapeOf(req);
    request_.accepts_gzip = shape_.accepts_gzip;
    if (!state_->auth) {
      Dispatch();
      return;
    }
    const auto header = req[bhttp::field::authorization];
    auto credentials = ParseBasicAuthorization(std::string_view(header.data(), header.size()));
    if (!credentials) {
      Unauthorized();
    } else if (state_->auth->IsCached(credentials->user, credentials->password)) {
      request_.user = std::move(credentials->user);
      Dispatch();
    } else if (state_->verify_pool == nullptr) {
      Close();  // the Server is gone
    } else if (!state_->verifications.TryStart(ClientAddress())) {
      TooManyVerifications();
    } else {
      VerifyOffThread(std::move(*credentials));
    }
  }

  std::string ClientAddress() const { return internal::ClientAddress(remote_); }

  void TooManyVerifications() {
    Response r = ErrorResponse(429, "too many password checks waiting; retry in a second");
    r.headers.emplace_back("Retry-After", "1");
    Send(std::move(r), /*close=*/false);
  }

  // bcrypt on the worker; the verdict comes back to the io_context thread.
  void VerifyOffThread(BasicCredentials credentials) {
    asio::post(
        *state_->verify_pool, [auth = state_->auth, executor = stream_.get_executor(),
                               credentials = std::move(credentials), self = Self()]() mutable {
          const bool ok = auth->Verify(credentials.user, credentials.password);
          // Moving `self` into the posted handler keeps its last reference off
          // this thread.
          asio::post(executor,
                     [self = std::move(self), ok, user = std::move(credentials.user)]() mutable {
                       self->OnVerified(ok, std::move(user));
                     });
        });
  }

  void OnVerified(bool ok, std::string user) {
    state_->verifications.Finish(ClientAddress());
    if (closed_) return;
    if (!ok) {
      Unauthorized();
      return;
    }
    request_.user = std::move(user);
    Dispatch();
  }

  void Unauthorized() {
    state_->metrics.auth_failures.Increment();
    Response r = ErrorResponse(401);
    r.headers.emplace_back("WWW-Authenticate", R"(Basic realm="iowatch", charset="UTF-8")");
    Send(std::move(r), /*close=*/false);
  }

  void Dispatch() {
    if (request_.method != "GET" && request_.method != "HEAD") {
      Response r = ErrorResponse(405);
      r.headers.emplace_back("Allow", "GET, HEAD");
      Send(std::move(r), /*close=*/false);
      return;
    }
    Response response;
    try {
      response = state_->handler(request_);
    } catch (const std::exception& e) {
      state_->metrics.handler_errors.Increment();
      response = ErrorResponse(500, e.what());
    } catch (...) {
      state_->metrics.handler_errors.Increment();
      response = ErrorResponse(500);
    }
    Send(std::move(response), /*close=*/false);
  }

  void Send(Response response, bool close) {
    shape_.keep_alive = shape_.keep_alive && !close && !state_->stopping;
    if (close) shape_.head = false;  // error answers to unparsed requests carry their text
    bool invalid_status = false;
    WireMessage message = BuildWireMessage(std::move(response), shape_, &invalid_status);
    if (invalid_status) state_->metrics.handler_errors.Increment();
    Lowest().expires_after(state_->options.write_timeout);
    auto on_written = beast::bind_front_handler(&Session::OnWritten, Self());
    if (message.streamed) {
      streamed_.emplace(std::move(*message.streamed));
      state_->metrics.CountResponse(request_.target, streamed_->result_int());
      keep_alive_ = streamed_->keep_alive();
      bhttp::async_write(stream_, *streamed_, std::move(on_written));
    } else {
      whole_.emplace(std::move(*message.whole));
      state_->metrics.CountResponse(request_.target, whole_->result_int());
      keep_alive_ = whole_->keep_alive();
      bhttp::async_write(stream_, *whole_, std::move(on_written));
    }
  }

  void OnWritten(beast::error_code ec, size_t) {
    // Once written (or failed): the duration covers a streamed body.
    state_->metrics.ObserveDuration(
        request_.target,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - request_started_).count());
    const bool producer_failed = streamed_ && streamed_->body().failed;
    whole_.reset();
    streamed_.reset();  // lets go of what the producer holds (a snapshot) at once
    if (closed_) return;
    if (producer_failed) {
      state_->metrics.handler_errors.Increment();
      Abort();
      return;
    }
    if (ec) {
      if (ec == beast::error::timeout) state_->metrics.write_timeouts.Increment();
      Close();
      return;
    }
    if (keep_alive_ && !state_->stopping) {
      ReadNext(/*first=*/false);
    } else {
      CloseGracefully();
    }
  }

  // A body that cannot be completed: a reset tells the client so even where
  // the framing could not (a close-delimited HTTP/1.0 body).
  void Abort() {
    beast::error_code ignored;
    Lowest().socket().set_option(asio::socket_base::linger(true, 0), ignored);
    Close();
  }

  void CloseGracefully() {
    SetPhase(Phase::kClosing);
    Lowest().expires_after(std::min(state_->options.read_timeout, kMaxLinger));
    if constexpr (kTls) {
      // close_notify; the peer may or may not answer before the deadline.
      stream_.async_shutdown([self = Self()](beast::error_code) { self->Close(); });
    } else {
      beast::error_code ignored;
      Lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
      buffer_.consume(buffer_.size());
      Drain();
    }
  }

  void Drain() {
    stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                            [self = Self()](beast::error_code ec, size_t n) {
                              self->drained_ += n;
                              if (ec || self->closed_ || self->drained_ > kMaxLingerBytes) {
                                self->Close();
                                return;
                              }
                              self->Drain();
                            });
  }

  std::shared_ptr<ServerState> state_;
  const std::string remote_;
  bool busy_ = false;  // AnswerBusy: 503 to the first request, then close
  Stream stream_;
  uint64_t id_ = 0;
  Phase phase_ = Phase::kHead;
  bool closed_ = false;
  size_t drained_ = 0;
  beast::flat_buffer buffer_;
  std::optional<RequestParser> parser_;
  Request request_;
  ResponseShape shape_;
  std::optional<WireResponse> whole_;
  std::optional<StreamResponse> streamed_;
  bool keep_alive_ = false;                                  // of the response being written
  std::chrono::steady_clock::time_point request_started_{};  // its head was read
};

using PlainSession = Session<beast::tcp_stream>;
using TlsSession = Session<asio::ssl::stream<beast::tcp_stream>>;

}  // namespace

void StartConnection(tcp::socket socket, std::shared_ptr<ServerState> state, bool busy) {
  beast::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  std::string remote = ec ? std::string("unknown") : FormatEndpoint(peer);
  if (state->tls) {
    auto& context = *state->tls;
    auto session = std::make_shared<TlsSession>(std::move(state), std::move(remote),
                                                std::move(socket), context);
    if (busy) session->AnswerBusy();
    session->Run();
  } else {
    std::make_shared<PlainSession>(std::move(state), std::move(remote), std::move(socket))->Run();
  }
}

}  // namespace iowatch::daemon::http::internal
