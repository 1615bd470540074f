// systemd integration for Type=notify units: READY=1 once the daemon serves,
// STOPPING=1 on shutdown, RELOADING=1 around a reload, and WATCHDOG=1 pings
// when the unit sets WatchdogSec. Every call does nothing when the process is
// not started by systemd (no NOTIFY_SOCKET), so the same binary runs anywhere.
//
// The protocol is sd_notify(3)'s, written here rather than linked from
// libsystemd (whose man page documents it for such standalone use): one
// datagram per message to the AF_UNIX socket $NOTIFY_SOCKET names (a path, or
// an abstract name spelled with a leading '@'); systemd reads the sender from
// the socket's credentials. libsystemd brought six more shared libraries
// (gcrypt, gpg-error, lzma, zstd, lz4, cap) into every iowatch process, about
// 0.5 MiB resident, for these two calls.
// Thread-safety: safe from any thread (each message is its own socket),
// provided nothing changes the environment meanwhile.
#pragma once

#include <chrono>
#include <optional>

namespace iowatch::daemon {

class SystemdNotifier {
 public:
  // Each returns whether the message was sent (false: not under systemd, or
  // the socket refused it; the daemon goes on either way).
  bool Ready();
  bool Reloading();
  bool Stopping();
  bool WatchdogPing();
  // Half of WatchdogSec (how often to ping), none when no watchdog is set or
  // it is set for another process ($WATCHDOG_USEC, $WATCHDOG_PID).
  std::optional<std::chrono::microseconds> WatchdogInterval() const;
};

}  // namespace iowatch::daemon
