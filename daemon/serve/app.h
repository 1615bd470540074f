// App: the composition root of `iowatch serve`. It owns the event loop (one
// io_context, one thread) and wires the pieces together: the sampling timer
// feeding the Sampler, the HTTP server answering from the latest Snapshot,
// signals (SIGTERM/SIGINT: graceful stop within 2 s, a running probe
// cancelled; SIGHUP: reload the config file, keeping the old one when the new
// one is invalid), the scheduled probes (ProbeService) and the systemd
// notifications and watchdog.
// Thread-safety: Run() on one thread; everything else happens on the event
// loop. Snapshots are immutable and swapped whole.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "config/config.h"

namespace iowatch::daemon {

// Command-line values; each set one overrides the config file's.
struct ServeFlags {
  std::optional<std::filesystem::path> config_file;
  std::optional<std::string> listen_address;
  std::optional<std::string> procfs;
  std::optional<std::string> sysfs;
  std::optional<std::string> udev_data;
  std::optional<std::string> state_dir;
  std::optional<std::string> log_level;
};

// What `serve` checks before it starts, beyond the config's own validation:
// the device filters compile, and the TLS certificate and key load.
Status CheckStartable(const config::Config& config);

// `iowatch check-config FILE`: 0 when `serve` would start with FILE, else the
// error on stderr and 2 — whatever `serve` would fail on at start.
int RunCheckConfig(const std::filesystem::path& file);

// The config file (or the built-in defaults) with the flags applied.
Result<config::Config> EffectiveConfig(const ServeFlags& flags);

// Runs until SIGTERM/SIGINT; returns the process exit status.
int RunServe(const ServeFlags& flags);

}  // namespace iowatch::daemon
