// RunConditions: what the probe's device and host did while a run measured,
// besides the probe itself, so that a run slowed by someone else's I/O is
// not taken for a slower disk. Measured by the daemon from the
// whole disk's counters (/sys/dev/block/M:m/stat, the diskstats fields),
// /proc/pressure/io and /proc/stat over the run's measured phase, and over a
// short window just before the run (LoadBefore), and stored with the run;
// the derived figures are computed here, in one place.
// Thread-safety: plain value.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

namespace iowatch::probes {

// The whole disk's work over a span in which the probe did nothing: every
// request in it was someone else's.
struct LoadWindow {
  double seconds = 0;  // > 0
  uint64_t device_ios = 0;
  uint64_t device_bytes = 0;
  double device_busy_seconds = 0;

  bool operator==(const LoadWindow&) const = default;

  // Requests, at most one per 4 KiB moved (RunConditions::ForeignIos).
  uint64_t Ios() const;
  double Iops() const { return seconds > 0 ? static_cast<double>(Ios()) / seconds : 0; }
  double BytesPerSecond() const {
    return seconds > 0 ? static_cast<double>(device_bytes) / seconds : 0;
  }
};

struct RunConditions {
  double seconds = 0;  // the span measured (monotonic), > 0
  // The target's whole disk over the span: requests completed (reads,
  // writes, discards; flushes are the probe's own fsyncs as often as not),
  // their bytes, the time it had requests in flight (io_ticks) and the sum
  // of the requests' times (read, write and discard ticks).
  uint64_t device_ios = 0;
  uint64_t device_bytes = 0;
  double device_busy_seconds = 0;
  double device_io_seconds = 0;
  // The probe's own part of those: its I/Os as the device counts requests
  // (an I/O larger than the queue's max_sectors_kb is split), its bytes and
  // the sum of its I/Os' total latencies.
  uint64_t own_requests = 0;
  uint64_t own_bytes = 0;
  double own_io_seconds = 0;
  // Host pressure: the share of the span some (all) tasks stalled on I/O,
  // /proc/pressure/io's totals; absent without PSI (CONFIG_PSI, psi=0).
  std::optional<double> io_pressure_some = std::nullopt;
  std::optional<double> io_pressure_full = std::nullopt;
  // The share of the span the probe's own thread was runnable but waited
  // for a CPU (schedstat run_delay): a QD1 probe on a fast disk is as much a
  // CPU benchmark as a disk one, and on this 2-core VM a compile beside it
  // cut randwrite 4k QD1 from 17,800 to 12,000 IOPS with no foreign I/O at
  // all. The thread's own figure, not PSI's system-wide one, which rises with
  // any queue on any CPU; absent without schedstat (CONFIG_SCHED_INFO).
  std::optional<double> cpu_wait = std::nullopt;
  // The share of all CPUs' time the hypervisor took (steal).
  double cpu_steal = 0;
  // Another probe run was measuring at some point of the span.
  bool other_probe = false;
  // The disk just before the run (probes.baseline.contention.before), the
  // probe not yet there: what others do when the probe does not crowd them
  // out. A 1 MiB QD8 read saturates a disk, so a rate-limited load beside
  // it completes a fraction of its requests: the run's own span says "light
  // load" for a healthy run and "heavy load" for a slow one, and a slower
  // disk would move its runs to another band. Absent: not measured (runs
  // stored before schema 5, or the window set to 0).
  std::optional<LoadWindow> before = std::nullopt;

  bool operator==(const RunConditions&) const = default;

  // The requests the device completed that were not the probe's, never
  // below 0, and at most one per 4 KiB of others' bytes: a large probe I/O
  // becomes a varying number of requests (split by max_sectors_kb and the
  // queue's segment limits, merged when sequential: a quiet 1 MiB QD8 read
  // counted 0.75 to 2 requests per I/O on this VM), while bytes are exact,
  // and a request that moved nothing was not someone else's.
  uint64_t ForeignIos() const {
    const uint64_t counted = device_ios > own_requests ? device_ios - own_requests : 0;
    return CappedRequests(counted, ForeignBytes());
  }
  static uint64_t CappedRequests(uint64_t requests, uint64_t bytes) {
    return std::min(requests, bytes / kMinForeignRequestBytes);
  }
  uint64_t ForeignBytes() const { return device_bytes > own_bytes ? device_bytes - own_bytes : 0; }
  double ForeignIops() const {
    return seconds > 0 ? static_cast<double>(ForeignIos()) / seconds : 0;
  }
  double ForeignBytesPerSecond() const {
    return seconds > 0 ? static_cast<double>(ForeignBytes()) / seconds : 0;
  }
  // Others' share of the disk's work, in [0, 1], each request weighted by
  // its size as 1 + bytes / 64 KiB (a fixed cost plus its transfer). Not the
  // share of request time: the ticks count a split request once per piece
  // (a quiet 1 MiB QD8 read showed twice its own latency sum), and the
  // probe's own latencies include the system call's time (about 1.25 × the
  // block layer's ticks for psync QD1 here), so a time share was wrong both
  // ways; counts and bytes are exact.
  double ForeignShare() const {
    const double foreign = Weighted(ForeignIos(), ForeignBytes());
    const double own = Weighted(std::min(own_requests, device_ios), own_bytes);
    return foreign + own > 0 ? foreign / (foreign + own) : 0;
  }
  // Requests weighted by size: each counts 1 + its bytes / 64 KiB.
  static double Weighted(uint64_t requests, uint64_t bytes) {
    return static_cast<double>(requests) + static_cast<double>(bytes) / kBytesPerWorkUnit;
  }
  static constexpr uint64_t kMinForeignRequestBytes = 4096;
  static constexpr double kBytesPerWorkUnit = 64.0 * 1024;
  // The device's %util over the span, in [0, 1].
  double Utilisation() const {
    if (seconds <= 0) return 0;
    const double util = device_busy_seconds / seconds;
    return util > 1 ? 1 : util;
  }
};

inline uint64_t LoadWindow::Ios() const {
  return RunConditions::CappedRequests(device_ios, device_bytes);
}

}  // namespace iowatch::probes
