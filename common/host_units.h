// The host's page size and clock tick rate (USER_HZ: the unit of the CPU
// times in /proc/stat and /proc/PID/stat), as sysconf reports them, each with
// Linux's usual value where sysconf cannot say (it returns -1): 4 KiB pages,
// 100 ticks a second. One place, so that the daemon's own process metrics,
// `iowatch vmstat` and fio's job files read the same host.
// Thread-safety: sysconf may be called from any thread.
#pragma once

#include <unistd.h>

#include <cstdint>

namespace iowatch {

inline constexpr uint64_t kUsualPageBytes = 4096;
inline constexpr uint64_t kUsualUserHz = 100;

// `value`, what sysconf returned, when it is positive; else `usual`.
constexpr uint64_t PositiveOr(long value, uint64_t usual) {
  return value > 0 ? static_cast<uint64_t>(value) : usual;
}

inline uint64_t PageBytes() { return PositiveOr(sysconf(_SC_PAGESIZE), kUsualPageBytes); }
inline uint64_t UserHz() { return PositiveOr(sysconf(_SC_CLK_TCK), kUsualUserHz); }

}  // namespace iowatch
