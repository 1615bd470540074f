// IntervalSleeper: waits for fixed-cadence deadlines (start + n × interval, so
// reports do not drift, as sysstat's alarm() does) and wakes early when
// SIGINT or SIGTERM arrives, so a command can finish its output cleanly
// (close the JSON document) before exiting.
// Thread-safety: one instance per process, used from the main thread.
#pragma once

#include <chrono>

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

}  // namespace iowatch::daemon
