#include "probes/run/probe_clock.h"

#include <time.h>

#include <cerrno>

#include "common/clock.h"

namespace iowatch::probes {

namespace {}  // namespace

uint64_t SteadyProbeClock::NowNs() {
  timespec now{};
  // Cannot fail: the clock exists on every kernel and `now` is valid.
  (void)clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * kNsPerSecond + static_cast<uint64_t>(now.tv_nsec);
}

void SteadyProbeClock::SleepUntilNs(uint64_t deadline_ns) {
  // An absolute deadline makes a retry after EINTR resume the same wait
  // instead of restarting a relative one, so signals never stretch pacing.
  const timespec deadline{
      .tv_sec = static_cast<time_t>(deadline_ns / kNsPerSecond),
      .tv_nsec = static_cast<long>(deadline_ns % kNsPerSecond),
  };
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == EINTR) {
  }
}

}  // namespace iowatch::probes
