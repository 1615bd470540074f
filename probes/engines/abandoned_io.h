// AbandonedIo: what an asynchronous engine's Close gave up on (a hung device
// still holds its I/Os): the kernel context (an AIO context, an io_uring
// ring) that the device may still complete into. Instead of leaking it to the
// process's end, the engine hands it over (ProbeEngine::TakeAbandoned): its
// owner polls it, without waiting, until every I/O completed, and only then
// destroys it, freeing the context (and aio-nr, host-wide) and, with
// probes/run/held_io.h, the buffers. Destroyed before that, it leaks what
// the kernel may still write to, as Close did.
// Thread-safety: one owner at a time; Poll never blocks.
#pragma once

#include <cstdint>

namespace iowatch::probes {

class AbandonedIo {
 public:
  virtual ~AbandonedIo() = default;
  // Takes the completions that arrived, without waiting; the I/Os still in
  // flight.
  virtual uint32_t Poll() noexcept = 0;
};

}  // namespace iowatch::probes
