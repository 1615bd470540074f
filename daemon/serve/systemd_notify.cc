#include "daemon/serve/systemd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace iowatch::daemon {
namespace {

// A whole decimal number, nothing before or after it.
std::optional<uint64_t> Decimal(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  uint64_t value = 0;
  const char* end = text + std::strlen(text);
  const auto [stop, error] = std::from_chars(text, end, value);
  if (error != std::errc() || stop != end) return std::nullopt;
  return value;
}

bool Notify(std::string_view message) {
  const char* name = std::getenv("NOTIFY_SOCKET");
  if (name == nullptr) return false;
  const size_t size = std::strlen(name);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  // Only file and abstract sockets: systemd 252 (Debian 12) offers nothing
  // else, and a name that does not fit is not one systemd made.
  if (size < 2 || (name[0] != '/' && name[0] != '@') || size > sizeof(address.sun_path)) {
    return false;
  }
  std::memcpy(address.sun_path, name, size);
  if (name[0] == '@') address.sun_path[0] = '\0';
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + size);
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const ssize_t sent = ::sendto(fd, message.data(), message.size(), MSG_NOSIGNAL,
                                reinterpret_cast<const sockaddr*>(&address), length);
  ::close(fd);
  return sent == static_cast<ssize_t>(message.size());
}

}  // namespace

bool SystemdNotifier::Ready() { return Notify("READY=1"); }
bool SystemdNotifier::Reloading() { return Notify("RELOADING=1"); }
bool SystemdNotifier::Stopping() { return Notify("STOPPING=1"); }
bool SystemdNotifier::WatchdogPing() { return Notify("WATCHDOG=1"); }

std::optional<std::chrono::microseconds> SystemdNotifier::WatchdogInterval() const {
  const std::optional<uint64_t> usec = Decimal(std::getenv("WATCHDOG_USEC"));
  if (!usec || *usec == 0) return std::nullopt;
  // Set for a parent that exec'ed this process, the watchdog is not ours.
  if (const char* pid = std::getenv("WATCHDOG_PID"); pid != nullptr) {
    const std::optional<uint64_t> owner = Decimal(pid);
    if (!owner || *owner != static_cast<uint64_t>(::getpid())) return std::nullopt;
  }
  return std::chrono::microseconds(*usec / 2);
}

}  // namespace iowatch::daemon
