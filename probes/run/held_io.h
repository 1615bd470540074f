// HeldIo: I/Os a hung device still held when a run gave up on them, with
// everything the kernel may still write into: the engine's context
// (AbandonedIo) and the run's buffers. Poll takes the completions that
// arrived; once every I/O completed, destroying it frees the context and the
// buffers (the context first: an io_uring ring unregisters them). Destroyed
// while I/Os are still in flight, it leaks both, as a run that gave up did
// before: a device that completes later writes into memory nobody reuses.
// Thread-safety: one owner at a time; Poll never blocks.
#pragma once

#include <cstdint>
#include <memory>

#include "probes/engines/abandoned_io.h"
#include "probes/run/io_buffers.h"

namespace iowatch::probes {

class HeldIo {
 public:
  HeldIo(std::unique_ptr<AbandonedIo> io, IoBuffers buffers, uint32_t in_flight)
      : buffers_(std::move(buffers)), io_(std::move(io)), in_flight_(in_flight) {}
  HeldIo(const HeldIo&) = delete;
  HeldIo& operator=(const HeldIo&) = delete;
  ~HeldIo() {
    if (in_flight_ > 0) buffers_.Leak();
  }

  // The I/Os still in flight, after taking the completions that arrived.
  uint32_t Poll() noexcept {
    if (in_flight_ > 0) in_flight_ = io_->Poll();
    return in_flight_;
  }
  uint32_t InFlight() const { return in_flight_; }
  size_t Bytes() const { return buffers_.Bytes(); }

 private:
  IoBuffers buffers_;  // declared first: freed after the context
  std::unique_ptr<AbandonedIo> io_;
  uint32_t in_flight_;
};

}  // namespace iowatch::probes
