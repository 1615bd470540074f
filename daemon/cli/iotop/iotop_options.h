// The command line of `iowatch iotop`: [-d DEV] [-o JSON] [--depth N]
// [interval [count]]. Without an interval, one report over one second.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace iowatch::daemon {

struct IotopOptions {
  std::string device;  // -d: only this device (kernel name); "" = every device
  bool json = false;   // -o JSON: one JSON document per report, one per line
  uint32_t depth = 2;  // --depth: cgroup levels below the root
  uint64_t interval_s = 1;
  std::optional<uint64_t> count;  // reports; none: forever (1 without an interval)
};

Result<IotopOptions> ParseIotopArgs(const std::vector<std::string>& args);

}  // namespace iowatch::daemon
