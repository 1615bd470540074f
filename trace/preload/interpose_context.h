// What the interposed functions (interpose.cc: the data calls;
// interpose_descriptors.cc: the calls that make, copy and close descriptors)
// share: the process's Tracer and the thread's busy flag.
// Busy is set while the tracer updates its tables, and by a fork's atfork
// handlers while they hold its mutex: a signal handler that does I/O in the
// middle of that passes through, rather than wait for a lock its own thread
// holds; a fork from such a handler makes a child that is not traced
// (interpose.cc's atfork handlers).
// Thread-safety: g_tracer is set once, before the program's main; t_busy is
// the thread's own.
#pragma once

#include <cerrno>

#include "trace/preload/tracer.h"

namespace iowatch::trace {

extern Tracer* g_tracer;  // made by the constructor, never destroyed (tracer.h)
extern __attribute__((tls_model("initial-exec"))) thread_local bool t_busy;

class Busy {
 public:
  Busy() : errno_(errno) { t_busy = true; }
  ~Busy() {
    t_busy = false;
    errno = errno_;
  }
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;

 private:
  int errno_;
};

// The tracer, unless this thread is inside it already or tracing is off.
inline Tracer* Active() { return t_busy ? nullptr : g_tracer; }

}  // namespace iowatch::trace
