// AbandonedIoPool: the I/Os hung devices still hold after probe runs gave up
// on them (probes/run/held_io.h: the engine's context and the run's
// buffers), by device. A run that gives up on a hung device used to leak its
// AIO context or io_uring ring and buffers for good while the scheduler kept
// probing the device: a suspended disk probed at QD32 x 1 MiB leaked 32 MiB
// and 32 of fs.aio-max-nr per run until other programs' libaio failed
// host-wide. Now the scheduler starts no probe on a device that holds any
// (skips{reason="abandoned_io"}), nor any probe while kMaxHeldIos are held
// in all; the pool polls what it holds (never waiting) when asked and on
// every sample, frees each once its I/Os completed, and logs both ends.
// Thread-safety: every member takes an internal mutex (Keep comes from a
// worker, the rest from the event loop).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "daemon/scheduling/device_busy.h"
#include "probes/run/held_io.h"

namespace iowatch::daemon {

class ProbeCounters;

class AbandonedIoPool {
 public:
  // About what 32 runs at QD128 leave; far below fs.aio-max-nr (65,536).
  static constexpr uint32_t kMaxHeldIos = 4096;

  // `counters` (may be null) gets iowatch_probe_held_ios.
  explicit AbandonedIoPool(ProbeCounters* counters = nullptr) : counters_(counters) {}

  // Takes a run's abandoned I/Os on `device` (its whole disk).
  void Keep(DeviceId device, std::unique_ptr<probes::HeldIo> held);
  // Polls everything held and frees what drained; the I/Os still held.
  uint32_t Poll();
  // The I/Os `device` still holds (as of the last Poll).
  uint32_t HeldOn(DeviceId device) const;
  uint32_t HeldInAll() const;

 private:
  uint32_t Total() const;  // mutex_ held
  void Publish() const;    // mutex_ held

  ProbeCounters* counters_;
  mutable std::mutex mutex_;
  std::map<DeviceId, std::vector<std::unique_ptr<probes::HeldIo>>> held_;
};

}  // namespace iowatch::daemon
