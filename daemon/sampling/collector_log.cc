#include "daemon/sampling/collector_log.h"

#include <fmt/format.h>

namespace iowatch::daemon {

void CollectorLog::Note(const std::vector<CollectorStatus>& statuses) {
  for (const CollectorStatus& status : statuses) {
    Logged& logged = logged_[status.name];
    const std::string error = status.success ? "" : status.error;
    if (error != logged.error) {
      if (!error.empty()) {
        sink_(Level::kWarn, fmt::format("collector {} failed: {}", status.name, error));
      } else {
        sink_(Level::kInfo, fmt::format("collector {} recovered", status.name));
      }
      logged.error = error;
    }
    if (!status.parse_error.empty() && status.parse_error != logged.parse_error) {
      sink_(Level::kWarn, fmt::format("collector {} skipped a malformed line: {}", status.name,
                                      status.parse_error));
      logged.parse_error = status.parse_error;
    }
  }
}

}  // namespace iowatch::daemon
