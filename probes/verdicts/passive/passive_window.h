// PassiveWindow: a disk's own I/O over one window (a minute, wall-aligned),
// for one op and size class, as the passive judge sees it: how many requests
// completed, their mean latency, and the load they came under. The figures
// are differences of cumulative counters between the window's two end
// samples, so a lost or late sample loses no request: the window is longer.
//
// The latency is the BPF collector's device stage (issue to completion,
// the disk's own time) per size class where it is on, else diskstats' time
// per request over all sizes (await: insertion to completion, the
// scheduler's queue included, in whole milliseconds summed by the kernel).
// `source` says which.
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace iowatch::probes {

enum class PassiveSource { kDevice, kDiskstats };
std::string_view ToString(PassiveSource source);  // "device", "diskstats"

struct PassiveWindow {
  std::string device;  // kernel name, as iowatch_disk_* label it
  std::string op;      // "read" or "write"
  // The request size class: the device stage's "small" (up to 16 KiB),
  // "medium" (up to 128 KiB) or "large" (above; collectors/bpf
  // iowatch_size_class); diskstats' windows are "all" (it has no sizes).
  std::string size;
  PassiveSource source = PassiveSource::kDiskstats;
  int64_t start_ms = 0;  // the window's first and last samples (wall clock)
  int64_t end_ms = 0;
  uint64_t requests = 0;    // completed in the window
  double mean_seconds = 0;  // per request; 0 without requests
  // The load: this series' requests per second, the disk's other I/O
  // (the other op's bytes per second), the mean request size, and the
  // share of all CPU time the hypervisor took (steal).
  double rate = 0;
  double other_bytes_rate = 0;
  double mean_bytes = 0;
  double steal = 0;
  // Context, never a regressor (a slower disk deepens its own queue):
  // the disk's mean queue depth (aqu-sz) and busy share (%util).
  double queue_depth = 0;
  double utilization = 0;
  // Why the window cannot be judged whatever the model says: a probe of
  // iowatch's ran on the disk in it (its requests are inside the counts),
  // or the counters went backwards (a device re-added, a program reloaded).
  bool probe = false;
  bool counters_reset = false;
  bool operator==(const PassiveWindow&) const = default;
};

}  // namespace iowatch::probes
