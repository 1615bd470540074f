// Time in the units iowatch's series and records use, in one place: a
// duration as fractional seconds, the wall clock as Unix seconds or
// milliseconds, and the monotonic clock as seconds.
// Thread-safety: pure functions of the clocks.
#pragma once

#include <chrono>
#include <cstdint>

namespace iowatch {

inline constexpr uint64_t kNsPerSecond = 1'000'000'000;

template <typename Rep, typename Period>
constexpr double ToSeconds(std::chrono::duration<Rep, Period> duration) {
  return std::chrono::duration<double>(duration).count();
}

inline double WallUnixSeconds() {
  return ToSeconds(std::chrono::system_clock::now().time_since_epoch());
}

inline int64_t WallUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// steady_clock in seconds: for intervals and deadlines, never for timestamps.
inline double MonotonicSeconds() {
  return ToSeconds(std::chrono::steady_clock::now().time_since_epoch());
}

}  // namespace iowatch
