// `iowatch health`'s arguments: [-d DEV] [-o JSON] [--state.dir DIR]
// [--path.udev.data DIR] [--smart-timeout SECONDS] [--no-smart].
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace iowatch::daemon {

struct HealthOptions {
  std::string device;  // -d: one whole disk (kernel name); empty: every disk
  bool json = false;
  // The daemon's state directory: its probe store (verdicts) and its kernel
  // log counts (errors since boot, beyond what the ring buffer still holds).
  std::string state_dir;
  // udev's database (serve's --path.udev.data): which dm devices are multipath maps.
  std::string udev_data = "/run/udev/data";
  double smart_timeout_seconds = 30;  // smartctl still running then is killed
  bool smart = true;                  // --no-smart: smartctl is not run
};

// `default_state_dir` is the config's default (config::Config{}.state_dir).
Result<HealthOptions> ParseHealthArgs(const std::vector<std::string>& args,
                                      const std::string& default_state_dir);

}  // namespace iowatch::daemon
