// RunConditions: what the probe's device and host did while a run measured,
// besides the probe itself, so that a run slowed by someone else's I/O is
// not taken for a slower disk (issue 13). Measured by the daemon from the
// whole disk's counters (/sys/dev/block/M:m/stat, the diskstats fields),
// /proc/pressure/io and /proc/stat over the run's measured phase, and stored
// with the run; the derived figures are computed here, in one place.
// Thread-safety: plain value.
#pragma once

#include <cstdint>
#include <optional>

namespace iowatch::probes {

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
  // The share of all CPUs' time the hypervisor took (steal).
  double cpu_steal = 0;
  // Another probe run was measuring at some point of the span.
  bool other_probe = false;

  bool operator==(const RunConditions&) const = default;

  // Everything the device did that was not the probe, never below 0.
  uint64_t ForeignIos() const { return device_ios > own_requests ? device_ios - own_requests : 0; }
  uint64_t ForeignBytes() const { return device_bytes > own_bytes ? device_bytes - own_bytes : 0; }
  double ForeignIops() const {
    return seconds > 0 ? static_cast<double>(ForeignIos()) / seconds : 0;
  }
  double ForeignBytesPerSecond() const {
    return seconds > 0 ? static_cast<double>(ForeignBytes()) / seconds : 0;
  }
  // The foreign requests' share of the device's request time, in [0, 1]:
  // how much of what the device did was for someone else. A lower bound: the
  // probe's latencies, as it sees them, include the system call's own time
  // (on this VM's virtio disk a psync QD1 run's summed latency is about 1.25
  // times the block layer's ticks for the same requests), so ForeignIos
  // is the sharper signal when the foreign share is small.
  double ForeignShare() const {
    if (device_io_seconds <= 0) return 0;
    const double foreign = device_io_seconds - own_io_seconds;
    return foreign <= 0 ? 0 : (foreign >= device_io_seconds ? 1 : foreign / device_io_seconds);
  }
  // The device's %util over the span, in [0, 1].
  double Utilisation() const {
    if (seconds <= 0) return 0;
    const double util = device_busy_seconds / seconds;
    return util > 1 ? 1 : util;
  }
};

}  // namespace iowatch::probes
