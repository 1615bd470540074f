// Slow clients against a full server: connections that have not sent a whole
// request (or idle between keep-alive requests) give way to a newcomer from an
// address that holds fewer connections, the oldest of the biggest holder's
// first; a connection whose request is being answered never does. The slow
// clients are plain sockets from 127.0.0.2, 127.0.0.3, ... (the whole loopback
// net is local) that send half a request head; web.read_timeout is far longer
// than the test, so nothing but eviction frees a slot.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "daemon/http/server.h"
#include "tests/unit/daemon/http/server_harness.h"
#include "tests/unit/daemon/http/test_client.h"

namespace iowatch::daemon::http {
namespace {

using namespace std::chrono_literals;
using testing::ServerHarness;
using testing::TestClient;
using testing::WaitFor;

// A socket from `from` to 127.0.0.1:port that sends the start of a request
// head and never finishes it.
class SlowClient {
 public:
  SlowClient(uint16_t port, const std::string& from) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in source{};
    source.sin_family = AF_INET;
    inet_pton(AF_INET, from.c_str(), &source.sin_addr);
    sockaddr_in server{};
    server.sin_family = AF_INET;
    server.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &server.sin_addr);
    constexpr std::string_view kHalfHead = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    ok_ = fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&source), sizeof source) == 0 &&
          connect(fd_, reinterpret_cast<sockaddr*>(&server), sizeof server) == 0 &&
          send(fd_, kHalfHead.data(), kHalfHead.size(), MSG_NOSIGNAL) ==
              static_cast<ssize_t>(kHalfHead.size());
  }
  ~SlowClient() {
    if (fd_ >= 0) close(fd_);
  }
  SlowClient(const SlowClient&) = delete;
  SlowClient& operator=(const SlowClient&) = delete;

  bool ok() const { return ok_; }
  // The server closed it or answered it (503): either way it holds no slot.
  // Does not wait.
  bool Closed() const {
    pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
    return poll(&p, 1, 0) == 1;
  }

 private:
  int fd_;
  bool ok_ = false;
};

using SlowClients = std::vector<std::unique_ptr<SlowClient>>;

class SlowClientsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = harness_.Start(
        ServerOptions{.read_timeout = 60s, .idle_timeout = 60s, .max_connections = 64},
        [](const Request& request) {
          Response response{.body = "ok\n"};
          if (request.target == "/endless") {  // held open while the client does not read
            response.stream = [pieces = 0](std::string& out) mutable {
              out.append(kStreamPieceBytes, 'x');
              return ++pieces < 4096;
            };
          }
          return response;
        });
    ASSERT_TRUE(server) << server.error().ToString();
  }
  uint16_t port() { return harness_.server().local_port(); }
  ServerStats stats() { return harness_.server().stats(); }

  // `count` slow connections from `from`, appended to `out`; returns once the
  // server has accepted (or refused) every one.
  void OpenSlow(const std::string& from, int count, SlowClients& out) {
    const uint64_t before = stats().connections_accepted;
    for (int i = 0; i < count; ++i) {
      out.push_back(std::make_unique<SlowClient>(port(), from));
      ASSERT_TRUE(out.back()->ok()) << "slow client " << i << " from " << from;
    }
    ASSERT_TRUE(WaitFor([&] { return stats().connections_accepted == before + count; }))
        << "accepted " << stats().connections_accepted << ", expected " << before + count;
  }

  // A scrape from 127.0.0.1 on a fresh connection, which must be answered 200
  // within a second (it takes milliseconds; the margin is for TSan).
  void ExpectScrapeAnswered(int i) {
    const auto start = std::chrono::steady_clock::now();
    TestClient scraper;
    ASSERT_FALSE(scraper.Connect(port(), "127.0.0.1")) << "scrape " << i;
    const auto reply = scraper.Get("/metrics");
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_FALSE(reply.ec) << "scrape " << i << ": " << reply.ec.message();
    EXPECT_EQ(reply.response.result_int(), 200u) << "scrape " << i << ": " << reply.response.body();
    EXPECT_LT(took, 1s) << "scrape " << i;
  }

  static int CountClosed(const SlowClients& clients) {
    int closed = 0;
    for (const auto& client : clients) closed += client->Closed() ? 1 : 0;
    return closed;
  }

  ServerHarness harness_;
};

// 2 addresses x 60 slow heads against max_connections 64: the first takes its
// share (48) and is refused beyond it; the second fills the rest (16), then
// takes the first's oldest until both hold 32, and is refused beyond. Scrapes
// from 127.0.0.1 used to be all refused with 503 until a read_timeout freed a
// slot; now each takes the oldest slow connection of an address holding 32.
TEST_F(SlowClientsTest, TwoAddressesFullOfSlowHeadsDoNotStarveAScrape) {
  SlowClients first, second;
  OpenSlow("127.0.0.2", 60, first);
  OpenSlow("127.0.0.3", 60, second);
  ASSERT_TRUE(WaitFor([&] { return harness_.server().active_connections() == 64; }));

  constexpr int kScrapes = 5;
  for (int i = 0; i < kScrapes; ++i) ExpectScrapeAnswered(i);

  const ServerStats after = stats();
  EXPECT_EQ(after.connections_rejected, 12u + 28u);
  // 16 taken by the second address; then one per scrape, or none when the
  // previous scrape's slot was already free.
  EXPECT_GE(after.connections_evicted, 16u + 1u);
  EXPECT_LE(after.connections_evicted, 16u + kScrapes);
  // Those refused or evicted, and nothing else, were closed.
  EXPECT_TRUE(WaitFor([&] {
    return CountClosed(first) + CountClosed(second) ==
           static_cast<int>(after.connections_rejected + after.connections_evicted);
  }));
  for (int i = 0; i < 16; ++i) EXPECT_TRUE(first[i]->Closed()) << "the first's oldest, " << i;
  for (int i = 16 + kScrapes; i < 48; ++i) EXPECT_FALSE(first[i]->Closed()) << i;
  EXPECT_TRUE(WaitFor([&] { return harness_.server().active_connections() <= 64; }));
}

// 16 addresses x 4 fill max_connections 64 exactly, each within its share.
TEST_F(SlowClientsTest, SixteenAddressesFullOfSlowHeadsDoNotStarveAScrape) {
  std::vector<SlowClients> by_address(16);
  for (int a = 0; a < 16; ++a) OpenSlow(fmt::format("127.0.0.{}", a + 2), 4, by_address[a]);
  ASSERT_TRUE(WaitFor([&] { return harness_.server().active_connections() == 64; }));
  EXPECT_EQ(stats().connections_rejected, 0u);

  ExpectScrapeAnswered(0);
  EXPECT_EQ(stats().connections_evicted, 1u);
  // Every address holds as many: the oldest connection of all gives way.
  EXPECT_TRUE(WaitFor([&] { return by_address[0][0]->Closed(); }));
  int closed = 0;
  for (const auto& clients : by_address) closed += CountClosed(clients);
  EXPECT_EQ(closed, 1);
}

// Connections whose request is being answered (a streamed body the client
// does not read) are never evicted: a slow head among them is the one that
// gives way, and with every slot answering a newcomer is refused.
TEST_F(SlowClientsTest, AConnectionBeingAnsweredIsNeverEvicted) {
  std::vector<std::unique_ptr<TestClient>> readers;
  const auto answer_one = [&](const char* from) {
    readers.push_back(std::make_unique<TestClient>());
    ASSERT_FALSE(readers.back()->Connect(port(), from));
    ASSERT_FALSE(readers.back()->Send("GET", "/endless"));
  };
  for (int i = 0; i < 63; ++i) answer_one(i < 48 ? "127.0.0.2" : "127.0.0.3");
  ASSERT_TRUE(WaitFor([&] { return stats().responses_by_class[2] == 63; }));
  SlowClients slow;
  OpenSlow("127.0.0.3", 1, slow);
  ASSERT_TRUE(WaitFor([&] { return harness_.server().active_connections() == 64; }));

  ExpectScrapeAnswered(0);
  EXPECT_TRUE(WaitFor([&] { return slow[0]->Closed(); }));
  EXPECT_EQ(stats().connections_evicted, 1u);

  // The scrape's connection closes; a 64th answer takes its slot.
  ASSERT_TRUE(WaitFor([&] { return harness_.server().active_connections() == 63; }));
  answer_one("127.0.0.4");
  ASSERT_TRUE(WaitFor([&] { return stats().responses_by_class[2] == 63 + 1 + 1; }));
  TestClient refused;
  ASSERT_FALSE(refused.Connect(port(), "127.0.0.1"));
  const auto reply = refused.Get("/metrics");
  if (!reply.ec) {  // or a reset racing the 503
    EXPECT_EQ(reply.response.result_int(), 503u);
  }
  EXPECT_TRUE(WaitFor([&] { return stats().connections_rejected == 1; }));
  EXPECT_EQ(stats().connections_evicted, 1u);
  EXPECT_EQ(harness_.server().active_connections(), 64u);
}

}  // namespace
}  // namespace iowatch::daemon::http
