#include "daemon/cli/sleeper.h"

#include <signal.h>
#include <time.h>

#include <cerrno>

namespace iowatch::daemon {
namespace {

volatile sig_atomic_t g_interrupted = 0;  // the one state a signal handler may touch

void OnSignal(int) { g_interrupted = 1; }

void InstallHandlers() {
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: the sleep must return EINTR
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

}  // namespace

IntervalSleeper::IntervalSleeper(std::chrono::seconds interval)
    : interval_(interval), next_(std::chrono::steady_clock::now()) {
  InstallHandlers();
}

bool IntervalSleeper::SleepUntilNext() {
  next_ += interval_;
  const auto since_epoch = next_.time_since_epoch();
  timespec deadline{};
  deadline.tv_sec = std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
  deadline.tv_nsec =
      static_cast<long>((since_epoch - std::chrono::seconds(deadline.tv_sec)).count());
  while (!g_interrupted) {
    const int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr);
    if (rc == 0) return !g_interrupted;
    if (rc != EINTR) return !g_interrupted;
  }
  return false;
}

bool IntervalSleeper::Interrupted() { return g_interrupted != 0; }

}  // namespace iowatch::daemon
