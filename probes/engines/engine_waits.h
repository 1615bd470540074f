// What the asynchronous engines (io_uring, libaio) share about waiting: how
// long Close waits for I/O still in flight before abandoning it, the longest
// wait a Reap honours, and the conversion of a duration into the kernel's
// timespec types.
// Thread-safety: constants and a pure function.
#pragma once

#include <chrono>

namespace iowatch::probes {

// How long Close waits for cancelled I/O. Block I/O cannot be cancelled once
// it reached the device, so this is the time a healthy device needs to
// finish what was queued; a hung device is abandoned after it.
inline constexpr std::chrono::seconds kCloseDrainTimeout{5};
// Bounds a wait so that "now + timeout" cannot overflow.
inline constexpr std::chrono::nanoseconds kLongestWait = std::chrono::hours(24 * 365);

// `duration` as a timespec or __kernel_timespec (tv_sec, tv_nsec).
template <typename Timespec>
Timespec ToTimespec(std::chrono::nanoseconds duration) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(duration);
  Timespec ts{};
  ts.tv_sec = seconds.count();
  ts.tv_nsec = (duration - seconds).count();
  return ts;
}

}  // namespace iowatch::probes
