// PushExposition against sockets of this test: what goes on the wire (PUT,
// the encoded path, the exposition as it is), which answers count as
// success, and that nothing of the push outlives the call.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>

#include "daemon/metrics/push/pushgateway.h"

namespace iowatch::daemon {
namespace {

// A listening socket on 127.0.0.1 (the kernel completes connections to it
// whether or not anyone accepts them).
int Listen(uint16_t& port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), length), 0);
  EXPECT_EQ(listen(fd, 4), 0);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  port = ntohs(address.sin_port);
  return fd;
}

// Accepts one connection, reads one request (head and Content-Length body),
// answers `answer` and closes; request() once joined.
class OneShotServer {
 public:
  explicit OneShotServer(std::string answer) : fd_(Listen(port_)) {
    thread_ = std::thread([this, answer = std::move(answer)] {
      pollfd waiting{fd_, POLLIN, 0};
      if (poll(&waiting, 1, 5000) != 1) return;  // the client never came
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      timeval limit{5, 0};
      setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
      char buffer[4096];
      size_t want = std::string::npos;
      while (want == std::string::npos || request_.size() < want) {
        const ssize_t n = read(c, buffer, sizeof buffer);
        if (n <= 0) break;
        request_.append(buffer, static_cast<size_t>(n));
        const size_t end = request_.find("\r\n\r\n");
        const size_t length = request_.find("Content-Length: ");
        if (end != std::string::npos && length != std::string::npos && length < end) {
          want = end + 4 + std::stoul(request_.substr(length + 16));
        }
      }
      (void)!write(c, answer.data(), answer.size());
      close(c);
    });
  }
  ~OneShotServer() {
    Join();
    close(fd_);
  }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/gw/"; }
  const std::string& request() const { return request_; }

 private:
  uint16_t port_ = 0;
  int fd_;
  std::thread thread_;
  std::string request_;
};

size_t ThreadCount() {
  return static_cast<size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                                           std::filesystem::directory_iterator()));
}

constexpr std::string_view kText = "# TYPE x gauge\nx{a=\"b\"} 1\n";

// prometheus-cpp's Gateway sent POST (the group's other
// metrics stayed) with the values in the path raw.
TEST(PushExposition, PutsTheExpositionAsItIsUnderTheEncodedPath) {
  OneShotServer server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  auto target = MakePushTarget(server.Url(), "iowatch_probe", {"site=a b#", "instance=h"});
  ASSERT_TRUE(target.has_value());
  const auto pushed = PushExposition(*target, kText, std::chrono::seconds(5));
  server.Join();
  EXPECT_TRUE(pushed.has_value()) << pushed.error().ToString();
  const std::string& request = server.request();
  EXPECT_TRUE(
      request.starts_with("PUT /gw/metrics/job/iowatch_probe/site/a%20b%23/instance/h "
                          "HTTP/1.1\r\n"))
      << request;
  EXPECT_NE(request.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos);
  EXPECT_TRUE(request.ends_with(std::string("\r\n\r\n") + std::string(kText))) << request;
}

// prometheus-cpp reported every status below 400 as 200, so
// a redirect (nothing pushed) looked like success.
TEST(PushExposition, OnlyA2xxAnswerIsSuccess) {
  OneShotServer redirect(
      "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://elsewhere:9091/metrics\r\n"
      "Content-Length: 0\r\n\r\n");
  auto target = MakePushTarget(redirect.Url(), "j", {});
  auto pushed = PushExposition(*target, kText, std::chrono::seconds(5));
  ASSERT_FALSE(pushed.has_value());
  EXPECT_NE(pushed.error().message.find("answered HTTP 307, a redirect to "
                                        "\"http://elsewhere:9091/metrics\""),
            std::string::npos)
      << pushed.error().message;
  OneShotServer refused(
      "HTTP/1.1 400 Bad Request\r\nContent-Length: 26\r\n\r\npushed metrics are invalid");
  target = MakePushTarget(refused.Url(), "j", {});
  pushed = PushExposition(*target, kText, std::chrono::seconds(5));
  ASSERT_FALSE(pushed.has_value());
  EXPECT_EQ(pushed.error().ToString(),
            refused.Url() +
                ": cannot push: the gateway answered HTTP 400: pushed metrics are "
                "invalid");
}

// The push ran on a detached thread that a timed-out wait
// left behind, still in curl while static destructors ran at exit. curl's
// own timeout bounds the request now: when the call returns, no thread of it
// is left.
TEST(PushExposition, NoThreadOutlivesAPushThatTimedOut) {
  uint16_t port = 0;
  const int silent = Listen(port);  // accepts in the kernel, never answers
  const size_t before = ThreadCount();
  auto target = MakePushTarget("http://127.0.0.1:" + std::to_string(port), "j", {});
  ASSERT_TRUE(target.has_value());
  const auto start = std::chrono::steady_clock::now();
  const auto pushed = PushExposition(*target, kText, std::chrono::seconds(1));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(pushed.has_value());
  EXPECT_NE(pushed.error().message.find("no answer within 1 s"), std::string::npos)
      << pushed.error().message;
  EXPECT_LT(took, std::chrono::seconds(3));
  EXPECT_EQ(ThreadCount(), before);
  close(silent);
}

}  // namespace
}  // namespace iowatch::daemon
