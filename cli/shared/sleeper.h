// IntervalSleeper: waits for fixed-cadence deadlines (start + n × interval, so
// reports do not drift, as sysstat's alarm() does) and wakes early when
// SIGINT or SIGTERM arrives, so a command can finish its output cleanly
// (close the JSON document) before exiting. ReportEveryInterval is the
// reporting commands' loop on it (iostat, vmstat, iotop, biolatency).
// Thread-safety: one instance per process, used from the main thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/result.h"

namespace iowatch::daemon {

class IntervalSleeper {
 public:
  explicit IntervalSleeper(std::chrono::seconds interval);
  // False when interrupted by SIGINT/SIGTERM.
  bool SleepUntilNext();
  static bool Interrupted();

 private:
  std::chrono::seconds interval_;
  std::chrono::steady_clock::time_point next_;
};

// `reports` times (forever when none), one interval after the other, writes
// report()'s text to stdout. Stops early, with success, on SIGINT/SIGTERM,
// and at the first error, report()'s or stdout's, which it returns.
Status ReportEveryInterval(std::chrono::seconds interval, std::optional<uint64_t> reports,
                           const std::function<Result<std::string>()>& report);

}  // namespace iowatch::daemon
