#include "trace/preload/tick_clock.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace iowatch::trace {
namespace {

// CPUID 0x80000007 EDX bit 8: the TSC is invariant (constant rate, running
// in every C- and P-state), the kernel's constant_tsc + nonstop_tsc.
bool InvariantTsc() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007u) return false;
  if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1u << 8)) != 0;
#else
  return false;
#endif
}

}  // namespace

void TickClock::Start(bool timing) {
  off_ = false;
  tsc_ = InvariantTsc();
  start_ns_ = MonotonicNs();
  start_ticks_ = Ticks();
  off_ = !timing;
}

double TickClock::NsPerTick() const {
  if (off_ || !tsc_) return 1.0;
  const uint64_t ticks = Ticks() - start_ticks_;
  const uint64_t ns = MonotonicNs() - start_ns_;
  return ticks == 0 ? 1.0 : static_cast<double>(ns) / static_cast<double>(ticks);
}

double TickClock::SecondsSinceStart() const {
  return static_cast<double>(MonotonicNs() - start_ns_) / 1e9;
}

}  // namespace iowatch::trace
