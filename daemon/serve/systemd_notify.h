// systemd integration for Type=notify units: READY=1 once the daemon serves,
// STOPPING=1 on shutdown, RELOADING=1 around a reload, and WATCHDOG=1 pings
// when the unit sets WatchdogSec. Every call does nothing when the process is
// not started by systemd (no NOTIFY_SOCKET), so the same binary runs anywhere.
// Thread-safety: safe from any thread (sd_notify is).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace iowatch::daemon {

class SystemdNotifier {
 public:
  void Ready();
  void Reloading();
  void Stopping();
  void Status(std::string_view text);
  void WatchdogPing();
  // Half of WatchdogSec (how often to ping), none when no watchdog is set.
  std::optional<std::chrono::microseconds> WatchdogInterval() const;
};

}  // namespace iowatch::daemon
