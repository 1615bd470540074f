#include "cli/shared/sleeper.h"

#include <time.h>

#include <cerrno>

#include "cli/shared/cli_output.h"
#include "cli/shared/stop_signal.h"

namespace iowatch::daemon {

IntervalSleeper::IntervalSleeper(std::chrono::seconds interval)
    : interval_(interval), next_(std::chrono::steady_clock::now()) {
  StopOnSignals();
}

bool IntervalSleeper::SleepUntilNext() {
  next_ += interval_;
  const auto since_epoch = next_.time_since_epoch();
  timespec deadline{};
  deadline.tv_sec = std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
  deadline.tv_nsec =
      static_cast<long>((since_epoch - std::chrono::seconds(deadline.tv_sec)).count());
  while (!StopRequested()) {
    const int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr);
    if (rc == 0) return !StopRequested();
    if (rc != EINTR) return !StopRequested();
  }
  return false;
}

bool IntervalSleeper::Interrupted() { return StopRequested(); }

Status ReportEveryInterval(std::chrono::seconds interval, std::optional<uint64_t> reports,
                           const std::function<Result<std::string>()>& report) {
  IntervalSleeper sleeper{interval};
  for (uint64_t n = 0; !reports || n < *reports; ++n) {
    if (!sleeper.SleepUntilNext()) break;
    Result<std::string> text = report();
    if (!text) return ErrorOf(text);
    if (Status written = WriteStdout(*text); !written) return written;
  }
  return {};
}

}  // namespace iowatch::daemon
