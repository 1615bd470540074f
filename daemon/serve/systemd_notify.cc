#include "daemon/serve/systemd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "common/decimal.h"

namespace iowatch::daemon {
namespace {

// An environment variable's value, empty when unset.
std::string_view Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string_view() : std::string_view(value);
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
  const std::optional<uint64_t> usec = ParseDecimal<uint64_t>(Env("WATCHDOG_USEC"));
  if (!usec || *usec == 0) return std::nullopt;
  // Set for a parent that exec'ed this process, the watchdog is not ours.
  if (std::getenv("WATCHDOG_PID") != nullptr) {
    const std::optional<uint64_t> owner = ParseDecimal<uint64_t>(Env("WATCHDOG_PID"));
    if (!owner || *owner != static_cast<uint64_t>(::getpid())) return std::nullopt;
  }
  return std::chrono::microseconds(*usec / 2);
}

}  // namespace iowatch::daemon
