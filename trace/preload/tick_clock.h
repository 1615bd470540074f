// How the trace library times calls: the TSC where it runs at a constant rate
// through every power state (CPUID's invariant TSC), else CLOCK_MONOTONIC.
// A 4 KiB read from the page cache takes ~600 ns here; two clock_gettime
// calls add ~47 ns to it (8 %), two rdtsc ~20 ns. Ticks are converted to
// nanoseconds once, at exit, from the ticks and nanoseconds elapsed since
// the start (a process's whole life calibrates its own rate). Off
// (IOWATCH_TRACE_TIMES=0), every call reads 0: counts and bytes only, for
// half the library's cost.
// Thread-safety: Ticks() from any thread; Start and NsPerTick from one.
#pragma once

#include <cstdint>
#include <ctime>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace iowatch::trace {

class TickClock {
 public:
  void Start(bool timing);
  uint64_t Ticks() const {
    if (off_) return 0;
#if defined(__x86_64__) || defined(__i386__)
    if (tsc_) return __rdtsc();
#endif
    return MonotonicNs();
  }
  // Nanoseconds per tick over [Start(), now]; 1 on the monotonic clock.
  double NsPerTick() const;
  double SecondsSinceStart() const;
  const char* Name() const {
    if (off_) return "none";
    return tsc_ ? "tsc" : "monotonic";
  }

  static uint64_t MonotonicNs() {
    timespec now{};
    (void)clock_gettime(CLOCK_MONOTONIC, &now);  // cannot fail for CLOCK_MONOTONIC
    return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
  }

 private:
  bool off_ = false;
  bool tsc_ = false;
  uint64_t start_ticks_ = 0;
  uint64_t start_ns_ = 0;
};

}  // namespace iowatch::trace
