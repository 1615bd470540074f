// Flags every subcommand understands, spelled as Prometheus exporters spell them.
#pragma once

#include <string>

namespace iowatch::daemon {

struct GlobalOptions {
  std::string procfs = "/proc";
  std::string sysfs = "/sys";
};

}  // namespace iowatch::daemon
