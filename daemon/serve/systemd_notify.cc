#include "daemon/serve/systemd_notify.h"

#include <systemd/sd-daemon.h>

#include <string>

namespace iowatch::daemon {

void SystemdNotifier::Ready() { sd_notify(0, "READY=1"); }
void SystemdNotifier::Reloading() { sd_notify(0, "RELOADING=1"); }
void SystemdNotifier::Stopping() { sd_notify(0, "STOPPING=1"); }
void SystemdNotifier::WatchdogPing() { sd_notify(0, "WATCHDOG=1"); }

void SystemdNotifier::Status(std::string_view text) {
  sd_notify(0, ("STATUS=" + std::string(text)).c_str());
}

std::optional<std::chrono::microseconds> SystemdNotifier::WatchdogInterval() const {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
  return std::chrono::microseconds(usec / 2);
}

}  // namespace iowatch::daemon
