#include "cli/shared/local_time.h"

namespace iowatch::daemon {
namespace {

std::string FormatLocalSeconds(std::time_t t, const char* strftime_format) {
  std::tm local{};
  if (localtime_r(&t, &local) == nullptr) return {};  // a year that does not fit an int
  char buffer[128];
  const size_t n = std::strftime(buffer, sizeof buffer, strftime_format, &local);
  return std::string(buffer, n);
}

}  // namespace

std::string FormatLocal(int64_t unix_ms, const char* strftime_format) {
  return FormatLocalSeconds(static_cast<std::time_t>(unix_ms / 1000), strftime_format);
}

std::string FormatNow(const char* strftime_format) {
  return FormatLocalSeconds(std::time(nullptr), strftime_format);
}

}  // namespace iowatch::daemon
