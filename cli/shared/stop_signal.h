// The one-shot commands' answer to SIGINT and SIGTERM: instead of dying, the
// process sets a flag and finishes its output (partial probe results, the
// closing of a JSON document). SA_RESTART is off, so a blocking wait or sleep
// returns EINTR and the caller looks at the flag.
// Thread-safety: the flag is a lock-free atomic, the only state a signal
// handler may touch; installing the handlers twice is harmless.
#pragma once

#include <atomic>

namespace iowatch::daemon {

// Installs the handlers and returns the flag they set.
const std::atomic<bool>& StopOnSignals();

// Whether SIGINT or SIGTERM has arrived since StopOnSignals().
bool StopRequested();

}  // namespace iowatch::daemon
