#include "daemon/serve/systemd_notify.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>

namespace iowatch::daemon {
namespace {

// The receiving end as systemd sets it up: a datagram socket with
// SO_PASSCRED, so that each message arrives with its sender's credentials.
class NotifySocket {
 public:
  // `name`: a path, or an abstract name with a leading '@' (as $NOTIFY_SOCKET spells it).
  explicit NotifySocket(const std::string& name) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const int on = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, name.data(), name.size());
    if (name[0] == '@') address.sun_path[0] = '\0';
    bound_ = ::bind(fd_, reinterpret_cast<const sockaddr*>(&address),
                    static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size())) == 0;
  }
  ~NotifySocket() { ::close(fd_); }
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  bool bound() const { return bound_; }

  struct Message {
    std::string text;
    pid_t sender = 0;
  };
  // The next datagram, none if nothing is waiting.
  std::optional<Message> Receive() {
    std::array<char, 4096> buffer{};
    iovec part{buffer.data(), buffer.size()};
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(ucred))> control{};
    msghdr header{};
    header.msg_iov = &part;
    header.msg_iovlen = 1;
    header.msg_control = control.data();
    header.msg_controllen = control.size();
    const ssize_t size = ::recvmsg(fd_, &header, MSG_DONTWAIT);
    if (size < 0) return std::nullopt;
    Message message{std::string(buffer.data(), static_cast<size_t>(size)), 0};
    for (cmsghdr* c = CMSG_FIRSTHDR(&header); c != nullptr; c = CMSG_NXTHDR(&header, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
        ucred credentials{};
        std::memcpy(&credentials, CMSG_DATA(c), sizeof(credentials));
        message.sender = credentials.pid;
      }
    }
    return message;
  }

 private:
  int fd_ = -1;
  bool bound_ = false;
};

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string TempSocketPath() {
  return (std::filesystem::temp_directory_path() /
          ("iowatch-notify-" + std::to_string(::getpid()) + ".sock"))
      .string();
}

TEST(SystemdNotifierTest, SendsNothingOutsideSystemd) {
  ScopedEnv socket("NOTIFY_SOCKET", nullptr);
  SystemdNotifier notifier;
  EXPECT_FALSE(notifier.Ready());
  EXPECT_FALSE(notifier.WatchdogPing());
}

TEST(SystemdNotifierTest, EachMessageIsOneDatagramFromThisProcess) {
  const std::string path = TempSocketPath();
  std::filesystem::remove(path);
  NotifySocket receiver(path);
  ASSERT_TRUE(receiver.bound()) << path;
  ScopedEnv socket("NOTIFY_SOCKET", path.c_str());
  SystemdNotifier notifier;
  EXPECT_TRUE(notifier.Ready());
  EXPECT_TRUE(notifier.Reloading());
  EXPECT_TRUE(notifier.WatchdogPing());
  EXPECT_TRUE(notifier.Stopping());
  for (const char* expected : {"READY=1", "RELOADING=1", "WATCHDOG=1", "STOPPING=1"}) {
    const auto message = receiver.Receive();
    ASSERT_TRUE(message.has_value()) << "no datagram for " << expected;
    EXPECT_EQ(message->text, expected);
    // systemd attributes a message to a unit by the sender's pid.
    EXPECT_EQ(message->sender, ::getpid());
  }
  EXPECT_FALSE(receiver.Receive().has_value());
  std::filesystem::remove(path);
}

TEST(SystemdNotifierTest, ReachesAnAbstractSocket) {
  const std::string name = "@iowatch-notify-test-" + std::to_string(::getpid());
  NotifySocket receiver(name);
  ASSERT_TRUE(receiver.bound());
  ScopedEnv socket("NOTIFY_SOCKET", name.c_str());
  EXPECT_TRUE(SystemdNotifier().Ready());
  const auto message = receiver.Receive();
  ASSERT_TRUE(message.has_value());
  EXPECT_EQ(message->text, "READY=1");
}

TEST(SystemdNotifierTest, NamesSystemdNeverGivesAreNotDialled) {
  SystemdNotifier notifier;
  const std::string too_long = "/" + std::string(sizeof(sockaddr_un::sun_path), 'x');
  for (const std::string& name : {std::string(""), std::string("@"), std::string("run/notify"),
                                  std::string("vsock:2:1234"), too_long}) {
    ScopedEnv socket("NOTIFY_SOCKET", name.c_str());
    EXPECT_FALSE(notifier.Ready()) << "'" << name << "'";
  }
  // A path nobody listens on: the send fails, nothing else happens.
  ScopedEnv socket("NOTIFY_SOCKET", "/nonexistent/iowatch-notify.sock");
  EXPECT_FALSE(notifier.Ready());
}

TEST(SystemdNotifierTest, PingsAtHalfTheWatchdogSetForThisProcess) {
  const std::string own_pid = std::to_string(::getpid());
  ScopedEnv usec("WATCHDOG_USEC", "30000000");
  {
    ScopedEnv pid("WATCHDOG_PID", nullptr);
    EXPECT_EQ(SystemdNotifier().WatchdogInterval(), std::chrono::seconds(15));
  }
  {
    ScopedEnv pid("WATCHDOG_PID", own_pid.c_str());
    EXPECT_EQ(SystemdNotifier().WatchdogInterval(), std::chrono::seconds(15));
  }
  {
    // Set for the process that exec'ed this one.
    const std::string other = std::to_string(::getpid() + 1);
    ScopedEnv pid("WATCHDOG_PID", other.c_str());
    EXPECT_EQ(SystemdNotifier().WatchdogInterval(), std::nullopt);
  }
  {
    ScopedEnv pid("WATCHDOG_PID", "12ab");
    EXPECT_EQ(SystemdNotifier().WatchdogInterval(), std::nullopt);
  }
}

TEST(SystemdNotifierTest, NoWatchdogWithoutAUsableTimeout) {
  ScopedEnv pid("WATCHDOG_PID", nullptr);
  for (const char* value : {static_cast<const char*>(nullptr), "", "0", "-5", "30s", "1e6"}) {
    ScopedEnv usec("WATCHDOG_USEC", value);
    EXPECT_EQ(SystemdNotifier().WatchdogInterval(), std::nullopt) << (value ? value : "(unset)");
  }
}

}  // namespace
}  // namespace iowatch::daemon
