// Test helper: a Server on its own io_context, run by a std::thread, as the
// daemon runs it on its main thread. OnIo() runs a function on that thread
// (StopAccepting, CloseAll and the destructor must be called there).
// Thread-safety: use from the test's thread.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <memory>
#include <thread>

#include "daemon/http/server.h"

namespace iowatch::daemon::http::testing {

class ServerHarness {
 public:
  ServerHarness() : work_(boost::asio::make_work_guard(io_)) {}
  ~ServerHarness() { Stop(); }

  // Starts the server (before the io thread runs, as the daemon does).
  Result<Server*> Start(ServerOptions options, Handler handler) {
    if (options.listen_address.empty() ||
        options.listen_address == ServerOptions{}.listen_address) {
      options.listen_address = "127.0.0.1:0";
    }
    auto server = Server::Start(io_, std::move(options), std::move(handler));
    if (!server) return ErrorOf(server);
    server_ = std::move(*server);
    if (!thread_.joinable()) thread_ = std::thread([this] { io_.run(); });
    return server_.get();
  }

  template <class F>
  void OnIo(F f) {
    std::promise<void> done;
    boost::asio::post(io_, [&] {
      f();
      done.set_value();
    });
    done.get_future().wait();
  }

  void Stop() {
    if (thread_.joinable()) {
      if (server_) OnIo([this] { server_.reset(); });
      work_.reset();
      io_.stop();
      thread_.join();
    }
    server_.reset();
  }

  Server& server() { return *server_; }
  boost::asio::io_context& io() { return io_; }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
};

}  // namespace iowatch::daemon::http::testing
