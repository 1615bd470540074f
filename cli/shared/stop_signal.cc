#include "cli/shared/stop_signal.h"

#include <signal.h>

namespace iowatch::daemon {
namespace {

std::atomic<bool> g_stop_requested{false};  // written by the signal handler only
static_assert(std::atomic<bool>::is_always_lock_free,
              "a signal handler may touch lock-free atomics only");

extern "C" void OnStopSignal(int /*signal*/) { g_stop_requested.store(true); }

}  // namespace

const std::atomic<bool>& StopOnSignals() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: waits return EINTR
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  return g_stop_requested;
}

bool StopRequested() { return g_stop_requested.load(); }

}  // namespace iowatch::daemon
