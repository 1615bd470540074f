// The command line of `iowatch iotop`: [-d DEV] [-o JSON] [--depth N]
// [interval [count]]. Without an interval, one report over one second.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "cli/shared/report_args.h"

namespace iowatch::daemon {

struct IotopOptions : ReportArgs {
  uint32_t depth = 2;  // --depth: cgroup levels below the root
};

Result<IotopOptions> ParseIotopArgs(const std::vector<std::string>& args);

}  // namespace iowatch::daemon
