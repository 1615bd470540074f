// The HTTP server end to end over loopback: routing and methods, keep-alive,
// gzip, limits and timeouts, graceful shutdown, start-up errors. Timeouts are
// short (300 ms) and every assertion about time has a wide margin.
#include "daemon/http/server.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

#include "tests/unit/daemon/http/server_harness.h"
#include "tests/unit/daemon/http/test_client.h"

namespace iowatch::daemon::http {
namespace {

using namespace std::chrono_literals;
using testing::ServerHarness;
using testing::TestClient;
using testing::WaitFor;

std::string BigBody() {
  std::string body;
  for (int i = 0; body.size() < 64 * 1024; ++i) {
    body += fmt::format("iowatch_disk_reads_completed_total{{device=\"sd{}\"}} {}\n", i, i * 7919);
  }
  return body;
}

Response Handle(const Request& request) {
  if (request.target == "/") return Response{.body = "hello\n"};
  if (request.target == "/big") return Response{.body = BigBody()};
  if (request.target == "/big-binary") return Response{.body = BigBody(), .compressible = false};
  if (request.target == "/throw") throw std::runtime_error("boom");
  if (request.target == "/bad-status") return Response{.status = 1000};
  return Response{.status = 404, .body = "not found\n"};
}

class ServerTest : public ::testing::Test {
 protected:
  Server& StartServer(ServerOptions options = {}, Handler handler = Handle) {
    auto server = harness_.Start(std::move(options), std::move(handler));
    if (!server) throw std::runtime_error(server.error().ToString());
    return **server;
  }
  uint16_t port() { return harness_.server().local_port(); }

  ServerHarness harness_;
};

TEST_F(ServerTest, ServesTheHandlersResponseWithContentLength) {
  StartServer();
  TestClient client;
  ASSERT_FALSE(client.Connect(port()));
  const auto reply = client.Get("/");
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(reply.response.result_int(), 200u);
  EXPECT_EQ(reply.response.body(), "hello\n");
  EXPECT_EQ(reply.response["Content-Length"], "6");
  EXPECT_EQ(reply.response["Content-Type"], "text/plain; charset=utf-8");
  EXPECT_FALSE(reply.response["Date"].empty());
  EXPECT_EQ(harness_.server().stats().responses_by_class[2], 1u);
}

TEST_F(ServerTest, LocalEndpointResolvesPortZero) {
  StartServer();
  EXPECT_NE(port(), 0);
  EXPECT_EQ(harness_.server().local_endpoint(), fmt::format("127.0.0.1:{}", port()));
}

TEST_F(ServerTest, HeadSendsHeadersOnlyAndKeepsTheConnectionUsable) {
  StartServer();
  TestClient client;
  ASSERT_FALSE(client.Connect(port()));
  auto reply = client.Request("HEAD", "/");
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(reply.response.result_int(), 200u);
  EXPECT_EQ(reply.response["Content-Length"], "6");
  EXPECT_TRUE(reply.response.body().empty());
  reply = client.Get("/");  // no stray body bytes before this answer
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(reply.response.body(), "hello\n");
}

TEST_F(ServerTest, NotFoundComesFromTheHandlerAndOtherMethodsGet405) {
  StartServer();
  TestClient client;
  ASSERT_FALSE(client.Connect(port()));
  auto reply = client.Get("/nope");
  ASSERT_FALSE(reply.ec);
  EXPECT_EQ(reply.response.result_int(), 404u);
  reply = client.Request("DELETE", "/");
  ASSERT_FALSE(reply.ec);
  EXPECT_EQ(reply.response.result_int(), 405u);
  EXPECT_EQ(reply.response["Allow"], "GET, HEAD");
  reply = client.Get("/");  // 405 keeps the connection
  ASSERT_FALSE(reply.ec);
  EXPECT_EQ(reply.response.result_int(), 200u);
}

TEST_F(ServerTest, HandlerExceptionsAndInvalidStatusesBecome500) {
  StartServer();
  TestClient client;
  ASSERT_FALSE(client.Connect(port()));
  EXPECT_EQ(client.Get("/throw").response.result_int(), 500u);
  EXPECT_EQ(client.Get("/bad-status").response.result_int(), 500u);
  EXPECT_EQ(harness_.server().stats().handler_errors, 2u);
  EXPECT_EQ(harness_.server().stats().responses_by_class[5], 2u);
}

TEST_F(ServerTest, RequestBodiesAreRefusedWith413) {
  StartServer();
  TestClient client;
  ASSERT_FALSE(client.Connect(port()));
  ASSERT_FALSE(client.WriteRaw("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"));
  const auto reply = client.Read();
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(reply.response.result_int(), 413u);
  EXPECT_FALSE(reply.response.keep_alive());
}

TEST_F(ServerTest, MalformedRequestGets400) {
  StartServer();
  TestClient client;
  ASSERT_FALSE(client.Connect(port()));
  ASSERT_FALSE(client.WriteRaw("GET / HTTP/9\r\n\r\n"));
  const auto reply = client.Read();
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(reply.response.result_int(), 400u);
}

TEST_F(ServerTest, GzipWhenAcceptedAndLargeEnough) {
  StartServer();
  TestClient client;
  ASSERT_FALSE(client.Connect(port()));
  auto reply = client.Get("/big", {{"Accept-Encoding", "deflate, gzip;q=0.8"}});
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(reply.response["Content-Encoding"], "gzip");
  EXPECT_EQ(reply.response["Vary"], "Accept-Encoding");
  EXPECT_EQ(reply.response["Content-Length"], std::to_string(reply.response.body().size()));
  EXPECT_LT(reply.response.body().size(), BigBody().size() / 4);
  EXPECT_EQ(testing::Gunzip(reply.response.body()), BigBody());

  reply = client.Get("/big");  // not accepted
  EXPECT_EQ(reply.response["Content-Encoding"], "");
  EXPECT_EQ(reply.response.body(), BigBody());
  reply = client.Get("/", {{"Accept-Encoding", "gzip"}});  // too small to bother
  EXPECT_EQ(reply.response["Content-Encoding"], "");
  EXPECT_EQ(reply.response.body(), "hello\n");
  reply = client.Get("/big-binary", {{"Accept-Encoding", "gzip"}});  // not compressible
  EXPECT_EQ(reply.response["Content-Encoding"], "");
  EXPECT_EQ(reply.response.body().size(), BigBody().size());
}

TEST_F(ServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  StartServer();
  TestClient client;
  ASSERT_FALSE(client.Connect(port()));
  for (int i = 0; i < 3; ++i) {
    const auto reply = client.Get("/");
    ASSERT_FALSE(reply.ec) << reply.ec.message();
    EXPECT_TRUE(reply.response.keep_alive());
  }
  EXPECT_EQ(harness_.server().stats().connections_accepted, 1u);
}

TEST_F(ServerTest, Http10ConnectionIsClosedAfterTheResponse) {
  StartServer();
  TestClient client;
  ASSERT_FALSE(client.Connect(port()));
  ASSERT_FALSE(client.WriteRaw("GET / HTTP/1.0\r\n\r\n"));
  const auto reply = client.Read();
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(reply.response.body(), "hello\n");
  EXPECT_EQ(client.ReadUntilClosed(), boost::asio::error::eof);
}

TEST_F(ServerTest, OversizedRequestHeadGets431AndClose) {
  StartServer(ServerOptions{.max_header_bytes = 1024});
  TestClient client;
  ASSERT_FALSE(client.Connect(port()));
  const std::string big(8000, 'a');
  ASSERT_FALSE(client.WriteRaw("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + big + "\r\n\r\n"));
  const auto reply = client.Read();
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(reply.response.result_int(), 431u);
  EXPECT_FALSE(reply.response.keep_alive());
  EXPECT_EQ(client.ReadUntilClosed(), boost::asio::error::eof);
}

TEST_F(ServerTest, ConnectionLimitAnswers503AndRecovers) {
  StartServer(ServerOptions{.max_connections = 2});
  TestClient first, second;
  ASSERT_FALSE(first.Connect(port()));
  ASSERT_FALSE(second.Connect(port()));
  ASSERT_TRUE(WaitFor([&] { return harness_.server().active_connections() == 2; }));

  TestClient third;
  ASSERT_FALSE(third.Connect(port()));
  const auto reply = third.Get("/");
  // The 503 normally arrives; a reset racing it is acceptable, a hang is not.
  if (!reply.ec) {
    EXPECT_EQ(reply.response.result_int(), 503u);
  }
  EXPECT_NE(third.ReadUntilClosed(), testing::beast::error::timeout);
  EXPECT_TRUE(WaitFor([&] { return harness_.server().stats().connections_rejected == 1; }));
  EXPECT_EQ(harness_.server().active_connections(), 2u);

  first.Close();
  ASSERT_TRUE(WaitFor([&] { return harness_.server().active_connections() == 1; }));
  TestClient fourth;
  ASSERT_FALSE(fourth.Connect(port()));
  const auto ok = fourth.Get("/");
  ASSERT_FALSE(ok.ec) << ok.ec.message();
  EXPECT_EQ(ok.response.result_int(), 200u);
}

// The cap was only global, so one address holding every
// connection (1,000 slow-header clients reconnecting) turned 58 of 60 scrapes
// from another address away with 503. One address now gets three quarters of
// max_connections; the global cap still holds (slow_clients_test.cc: who
// gives way when every slot is held).
TEST_F(ServerTest, OneClientAddressGetsAShareAndOthersTheRest) {
  StartServer(ServerOptions{.max_connections = 8});  // 6 for one address
  std::vector<std::unique_ptr<TestClient>> hog;
  for (int i = 0; i < 6; ++i) {
    hog.push_back(std::make_unique<TestClient>());
    ASSERT_FALSE(hog.back()->Connect(port(), "127.0.0.2"));
  }
  ASSERT_TRUE(WaitFor([&] { return harness_.server().active_connections() == 6; }));
  TestClient seventh;
  ASSERT_FALSE(seventh.Connect(port(), "127.0.0.2"));
  const auto refused = seventh.Get("/");
  if (!refused.ec) {  // or a reset racing it
    EXPECT_EQ(refused.response.result_int(), 503u);
  }
  EXPECT_TRUE(WaitFor([&] { return harness_.server().stats().connections_rejected == 1; }));

  TestClient scraper, second;
  ASSERT_FALSE(scraper.Connect(port(), "127.0.0.1"));
  const auto ok = scraper.Get("/");
  ASSERT_FALSE(ok.ec) << ok.ec.message();
  EXPECT_EQ(ok.response.result_int(), 200u);
  ASSERT_FALSE(second.Connect(port(), "127.0.0.1"));
  ASSERT_TRUE(WaitFor([&] { return harness_.server().active_connections() == 8; }));
  // Full: a newcomer from an address holding none takes the slot of the
  // biggest holder's oldest connection still waiting for its request (the
  // hog's first); the cap holds.
  TestClient newcomer;
  ASSERT_FALSE(newcomer.Connect(port(), "127.0.0.3"));
  const auto admitted = newcomer.Get("/");
  ASSERT_FALSE(admitted.ec) << admitted.ec.message();
  EXPECT_EQ(admitted.response.result_int(), 200u);
  EXPECT_NE(hog.front()->ReadUntilClosed(), testing::beast::error::timeout);
  EXPECT_EQ(harness_.server().stats().connections_evicted, 1u);
  EXPECT_EQ(harness_.server().stats().connections_rejected, 1u);
  EXPECT_EQ(harness_.server().active_connections(), 8u);

  hog.pop_back();  // the address's share frees with its connections
  ASSERT_TRUE(WaitFor([&] { return harness_.server().active_connections() == 7; }));
  TestClient again;
  ASSERT_FALSE(again.Connect(port(), "127.0.0.2"));
  const auto served = again.Get("/");
  ASSERT_FALSE(served.ec) << served.ec.message();
  EXPECT_EQ(served.response.result_int(), 200u);
}

TEST_F(ServerTest, IdleConnectionsDoNotDelayOthersAndAreClosedAtReadTimeout) {
  StartServer(ServerOptions{.read_timeout = 300ms});
  std::vector<std::unique_ptr<TestClient>> idle;
  for (int i = 0; i < 20; ++i) {
    idle.push_back(std::make_unique<TestClient>());
    ASSERT_FALSE(idle.back()->Connect(port()));
  }
  const auto opened = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return harness_.server().active_connections() == 20; }));

  {
    const auto start = std::chrono::steady_clock::now();
    TestClient client;
    ASSERT_FALSE(client.Connect(port()));
    const auto reply = client.Get("/");
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(reply.ec) << reply.ec.message();
    EXPECT_EQ(reply.response.result_int(), 200u);
    EXPECT_LT(took, 200ms);
  }
  for (auto& client : idle) EXPECT_EQ(client->ReadUntilClosed(), boost::asio::error::eof);
  const auto closed_after = std::chrono::steady_clock::now() - opened;
  EXPECT_GE(closed_after, 250ms);
  EXPECT_LT(closed_after, 2500ms);
  EXPECT_TRUE(WaitFor([&] { return harness_.server().active_connections() == 0; }));
  EXPECT_EQ(harness_.server().stats().read_timeouts, 20u);
}

TEST_F(ServerTest, TricklingTheHeadDoesNotExtendTheReadTimeout) {
  StartServer(ServerOptions{.read_timeout = 300ms});
  TestClient client;
  ASSERT_FALSE(client.Connect(port()));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_FALSE(client.WriteRaw("GET / HTTP/1.1\r\n"));
  bool closed = false;
  for (int i = 0; i < 40 && !closed; ++i) {  // a header line every 50 ms, up to 2 s
    std::this_thread::sleep_for(50ms);
    closed = static_cast<bool>(client.WriteRaw("X-Slow: 1\r\n"));
  }
  if (!closed) closed = client.ReadUntilClosed(1000ms) != testing::beast::error::timeout;
  EXPECT_TRUE(closed);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);
  EXPECT_TRUE(WaitFor([&] { return harness_.server().stats().read_timeouts == 1; }));
}

TEST_F(ServerTest, KeepAliveConnectionIsClosedAfterIdleTimeout) {
  StartServer(ServerOptions{.read_timeout = 5000ms, .idle_timeout = 200ms});
  TestClient client;
  ASSERT_FALSE(client.Connect(port()));
  ASSERT_FALSE(client.Get("/").ec);
  EXPECT_EQ(client.ReadUntilClosed(), boost::asio::error::eof);
  EXPECT_TRUE(WaitFor([&] { return harness_.server().stats().idle_closes == 1; }));
}

TEST_F(ServerTest, StopAcceptingLetsTheRequestInFlightFinish) {
  StartServer();
  TestClient in_flight, idle;
  ASSERT_FALSE(idle.Connect(port()));
  ASSERT_FALSE(idle.Get("/").ec);  // now idle between keep-alive requests
  ASSERT_FALSE(in_flight.Connect(port()));
  ASSERT_FALSE(in_flight.WriteRaw("GET / HTTP/1.1\r\nHost: x\r\n"));  // half a head
  ASSERT_TRUE(WaitFor([&] { return harness_.server().active_connections() == 2; }));

  harness_.OnIo([&] { harness_.server().StopAccepting(); });
  EXPECT_EQ(idle.ReadUntilClosed(), boost::asio::error::eof);
  TestClient late;
  EXPECT_TRUE(late.Connect(port()));  // refused: nobody listens

  ASSERT_FALSE(in_flight.WriteRaw("\r\n"));
  const auto reply = in_flight.Read();
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(reply.response.body(), "hello\n");
  EXPECT_FALSE(reply.response.keep_alive());
  EXPECT_EQ(in_flight.ReadUntilClosed(), boost::asio::error::eof);
  in_flight.Close();  // else the server lingers up to 1 s for our end of the close
  EXPECT_TRUE(WaitFor([&] { return harness_.server().active_connections() == 0; }));
}

TEST_F(ServerTest, ShutdownClosesStragglersAfterTheGracePeriod) {
  StartServer();
  TestClient straggler;
  ASSERT_FALSE(straggler.Connect(port()));
  ASSERT_FALSE(straggler.WriteRaw("GET / HTTP/1.1\r\n"));
  ASSERT_TRUE(WaitFor([&] { return harness_.server().active_connections() == 1; }));
  std::promise<void> done;
  const auto start = std::chrono::steady_clock::now();
  harness_.OnIo([&] { harness_.server().Shutdown(150ms, [&] { done.set_value(); }); });
  ASSERT_EQ(done.get_future().wait_for(3s), std::future_status::ready);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 100ms);
  EXPECT_EQ(harness_.server().active_connections(), 0u);
  EXPECT_NE(straggler.ReadUntilClosed(), testing::beast::error::timeout);
}

TEST_F(ServerTest, ShutdownWithoutConnectionsIsImmediate) {
  StartServer();
  std::promise<void> done;
  harness_.OnIo([&] { harness_.server().Shutdown(10s, [&] { done.set_value(); }); });
  EXPECT_EQ(done.get_future().wait_for(1s), std::future_status::ready);
}

TEST(ServerStart, PortInUseNamesThePort) {
  ServerHarness first;
  auto running = first.Start(ServerOptions{}, Handle);
  ASSERT_TRUE(running) << running.error().ToString();
  const uint16_t port = (*running)->local_port();
  boost::asio::io_context io;
  const auto second =
      Server::Start(io, ServerOptions{.listen_address = fmt::format("127.0.0.1:{}", port)}, Handle);
  ASSERT_FALSE(second);
  const std::string message = second.error().ToString();
  EXPECT_NE(message.find(fmt::format("127.0.0.1:{}", port)), std::string::npos) << message;
  EXPECT_NE(message.find("in use"), std::string::npos) << message;
  EXPECT_NE(message.find(fmt::format("port {}", port)), std::string::npos) << message;
}

TEST(ServerStart, RejectsBadOptions) {
  boost::asio::io_context io;
  const auto start = [&](ServerOptions options) {
    auto server = Server::Start(io, std::move(options), Handle);
    return server ? std::string() : server.error().ToString();
  };
  EXPECT_NE(start({.listen_address = "127.0.0.1"}).find("expected \"host:port\""),
            std::string::npos);
  EXPECT_NE(start({.listen_address = "127.0.0.1:0", .max_connections = 0}), "");
  EXPECT_NE(start({.listen_address = "127.0.0.1:0", .tls_cert_file = "c.pem"}).find("tls_key_file"),
            std::string::npos);
  EXPECT_NE(
      start({.listen_address = "127.0.0.1:0", .basic_auth_users = {{"prometheus", "plaintext"}}})
          .find("prometheus"),
      std::string::npos);
  EXPECT_NE(
      Server::Start(io, ServerOptions{.listen_address = "127.0.0.1:0"}, nullptr).error().ToString(),
      "");
}

}  // namespace
}  // namespace iowatch::daemon::http
