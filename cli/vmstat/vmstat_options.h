// The command line of `iowatch vmstat`: procps-ng's everyday options
// (-a -w -t -n -y -S k|K|m|M, grouped letters like "-wt" and "-Sm") and
// [delay [count]].
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace iowatch::daemon {

struct VmstatOptions {
  bool active = false;           // -a: inact/active instead of buff/cache
  bool wide = false;             // -w
  bool timestamp = false;        // -t
  bool one_header = false;       // -n
  bool skip_since_boot = false;  // -y
  uint64_t unit_bytes = 1024;    // -S
  std::optional<uint64_t> delay_s;
  std::optional<uint64_t> count;  // number of lines, the since-boot one included
};

Result<VmstatOptions> ParseVmstatArgs(const std::vector<std::string>& args);

}  // namespace iowatch::daemon
