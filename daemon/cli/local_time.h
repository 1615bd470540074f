// Dates and times as sysstat and procps print them, from the local time zone
// and always in the C locale (iowatch never calls setlocale).
#pragma once

#include <ctime>
#include <string>

namespace iowatch::daemon {

// strftime of the current local time.
std::string FormatNow(const char* strftime_format);

}  // namespace iowatch::daemon
