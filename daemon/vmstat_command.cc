#include "daemon/vmstat_command.h"

#include <cstdio>

namespace iowatch::daemon {

int RunVmstat(const GlobalOptions&, const std::vector<std::string>&) {
  std::fprintf(stderr, "iowatch vmstat: not built yet\n");
  return 2;
}

}  // namespace iowatch::daemon
