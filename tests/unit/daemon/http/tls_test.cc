// HTTPS: a self-signed certificate made with the openssl CLI at test time.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "daemon/http/server.h"
#include "daemon/http/tls_context.h"
#include "tests/unit/daemon/http/server_harness.h"
#include "tests/unit/daemon/http/test_client.h"

namespace iowatch::daemon::http {
namespace {

namespace fs = std::filesystem;

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char pattern[] = "/tmp/iowatch-http-tls-XXXXXX";
    if (mkdtemp(pattern) == nullptr) return;
    dir_ = pattern;
    const std::string command = fmt::format(
        "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
        "-keyout '{}' -out '{}' >/dev/null 2>&1",
        (dir_ / "key.pem").string(), (dir_ / "cert.pem").string());
    have_cert_ = std::system(command.c_str()) == 0 && fs::exists(dir_ / "cert.pem");
  }
  static void TearDownTestSuite() {
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }
  void SetUp() override {
    if (!have_cert_) GTEST_SKIP() << "the openssl command could not make a test certificate";
  }
  static ServerOptions TlsOptions() {
    return ServerOptions{.tls_cert_file = (dir_ / "cert.pem").string(),
                         .tls_key_file = (dir_ / "key.pem").string()};
  }

  static inline fs::path dir_;
  static inline bool have_cert_ = false;
};

Response Hello(const Request&) { return Response{.body = "hello over tls\n"}; }

TEST_F(TlsTest, ServesHttps) {
  testing::ServerHarness harness;
  const auto server = harness.Start(TlsOptions(), Hello);
  ASSERT_TRUE(server) << server.error().ToString();
  EXPECT_TRUE((*server)->tls());
  testing::TestClient client(/*tls=*/true);
  const auto ec = client.Connect((*server)->local_port());
  ASSERT_FALSE(ec) << ec.message();
  for (int i = 0; i < 2; ++i) {
    const auto reply = client.Get("/");
    ASSERT_FALSE(reply.ec) << reply.ec.message();
    EXPECT_EQ(reply.response.result_int(), 200u);
    EXPECT_EQ(reply.response.body(), "hello over tls\n");
  }
}

TEST_F(TlsTest, StreamsOverHttps) {
  std::string expected;
  for (int i = 0; i < 2000; ++i) expected += fmt::format("iowatch_x{{n=\"{}\"}} {}\n", i, i);
  testing::ServerHarness harness;
  const auto server = harness.Start(TlsOptions(), [&](const Request&) {
    Response response;
    response.stream = [&expected, offset = size_t{0}](std::string& out) mutable {
      out += std::string_view(expected).substr(offset, 4096);  // small pieces: many records
      offset += 4096;
      return offset < expected.size();
    };
    return response;
  });
  ASSERT_TRUE(server) << server.error().ToString();
  testing::TestClient client(/*tls=*/true);
  ASSERT_FALSE(client.Connect((*server)->local_port()));
  auto reply = client.Get("/");
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_TRUE(reply.response.body() == expected);
  reply = client.Get("/", {{"Accept-Encoding", "gzip"}});
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(testing::Gunzip(reply.response.body()), expected);
}

// Adversarial test: a TLS client over max_connections got a TLS EOF;
// it now gets a readable 503 with Retry-After, after a handshake.
TEST_F(TlsTest, OverTheConnectionLimitATlsClientReadsA503) {
  testing::ServerHarness harness;
  ServerOptions options = TlsOptions();
  options.max_connections = 1;
  const auto server = harness.Start(options, Hello);
  ASSERT_TRUE(server) << server.error().ToString();
  testing::TestClient first(/*tls=*/true);
  ASSERT_FALSE(first.Connect((*server)->local_port()));
  ASSERT_TRUE(testing::WaitFor([&] { return (*server)->active_connections() == 1; }));
  testing::TestClient second(/*tls=*/true);
  ASSERT_FALSE(second.Connect((*server)->local_port()));
  const auto reply = second.Get("/");
  ASSERT_FALSE(reply.ec) << reply.ec.message();
  EXPECT_EQ(reply.response.result_int(), 503u);
  EXPECT_EQ(reply.response["Retry-After"], "1");
  EXPECT_FALSE(reply.response.keep_alive());
  EXPECT_EQ((*server)->stats().connections_rejected, 1u);
  const auto ok = first.Get("/");  // the connection within the limit is served
  ASSERT_FALSE(ok.ec) << ok.ec.message();
  EXPECT_EQ(ok.response.result_int(), 200u);
}

TEST_F(TlsTest, PlainHttpOnTheTlsPortIsDropped) {
  testing::ServerHarness harness;
  const auto server = harness.Start(TlsOptions(), Hello);
  ASSERT_TRUE(server) << server.error().ToString();
  testing::TestClient client;
  ASSERT_FALSE(client.Connect((*server)->local_port()));
  const auto reply = client.Get("/");
  EXPECT_TRUE(reply.ec);
  EXPECT_TRUE(testing::WaitFor([&] { return (*server)->stats().tls_handshake_errors == 1; }));
}

TEST_F(TlsTest, MissingOrInvalidFilesFailStartNamingTheFile) {
  boost::asio::io_context io;
  ServerOptions options = TlsOptions();
  options.listen_address = "127.0.0.1:0";
  options.tls_cert_file = (dir_ / "missing.pem").string();
  auto server = Server::Start(io, options, Hello);
  ASSERT_FALSE(server);
  EXPECT_NE(server.error().ToString().find(options.tls_cert_file), std::string::npos)
      << server.error().ToString();
  EXPECT_NE(server.error().ToString().find("No such file"), std::string::npos);

  const std::string garbage = (dir_ / "garbage.pem").string();
  std::ofstream(garbage) << "not a certificate\n";
  options.tls_cert_file = (dir_ / "cert.pem").string();
  options.tls_key_file = garbage;
  server = Server::Start(io, options, Hello);
  ASSERT_FALSE(server);
  EXPECT_NE(server.error().ToString().find(garbage), std::string::npos)
      << server.error().ToString();

  // An endless device in place of the file is refused before the first read.
  options.tls_key_file = (dir_ / "key.pem").string();
  options.tls_cert_file = "/dev/zero";
  server = Server::Start(io, options, Hello);
  ASSERT_FALSE(server);
  EXPECT_EQ(server.error().ToString(),
            "/dev/zero: cannot read TLS certificate file: expected a regular file, found a "
            "character device");
}

}  // namespace
}  // namespace iowatch::daemon::http
