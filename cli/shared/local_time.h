// Dates and times as sysstat, procps and fio print them, from the local time
// zone and always in the C locale (iowatch never calls setlocale).
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

namespace iowatch::daemon {

// strftime of `unix_ms` (milliseconds since the epoch) in local time.
std::string FormatLocal(int64_t unix_ms, const char* strftime_format);

// strftime of the current local time.
std::string FormatNow(const char* strftime_format);

}  // namespace iowatch::daemon
