// The runner's clock: monotonic nanoseconds and a way to wait. Injected so
// tests of pacing and runtime run instantly and deterministically
// (ManualProbeClock advances when the runner sleeps).
// Thread-safety: SteadyProbeClock is stateless; ManualProbeClock is not
// thread-safe.
#pragma once

#include <cstdint>

namespace iowatch::probes {

class ProbeClock {
 public:
  virtual ~ProbeClock() = default;
  virtual uint64_t NowNs() = 0;
  virtual void SleepUntilNs(uint64_t deadline_ns) = 0;
};

// CLOCK_MONOTONIC and clock_nanosleep(TIMER_ABSTIME).
class SteadyProbeClock final : public ProbeClock {
 public:
  uint64_t NowNs() override;
  void SleepUntilNs(uint64_t deadline_ns) override;
};

// Time moves only when told to: SleepUntilNs jumps to the deadline and
// every NowNs() call adds `tick_ns` (so an I/O loop makes progress).
class ManualProbeClock final : public ProbeClock {
 public:
  explicit ManualProbeClock(uint64_t tick_ns = 0) : tick_ns_(tick_ns) {}
  uint64_t NowNs() override { return now_ns_ += tick_ns_; }
  void SleepUntilNs(uint64_t deadline_ns) override {
    if (deadline_ns > now_ns_) now_ns_ = deadline_ns;
  }
  void Advance(uint64_t ns) { now_ns_ += ns; }

 private:
  uint64_t now_ns_ = 0;
  uint64_t tick_ns_;
};

}  // namespace iowatch::probes
