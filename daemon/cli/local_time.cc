#include "daemon/cli/local_time.h"

namespace iowatch::daemon {

std::string FormatNow(const char* strftime_format) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[128];
  const size_t n = std::strftime(buffer, sizeof buffer, strftime_format, &local);
  return std::string(buffer, n);
}

}  // namespace iowatch::daemon
