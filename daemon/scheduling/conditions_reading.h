// Measuring a probe run's conditions (probes::RunConditions): the counters
// read when the run's measured phase starts and again when it ends, and the
// conditions computed from the two readings and the probe's own result.
// Thread-safety: ReadConditions reads files only (any thread);
// ComputeRunConditions is a pure function.
#pragma once

#include <optional>

#include "collectors/disk/diskstats.h"
#include "collectors/pressure/pressure.h"
#include "collectors/vm/proc_stat.h"
#include "common/file_tree.h"
#include "daemon/scheduling/device_busy.h"
#include "probes/run/probe_result.h"
#include "probes/verdicts/run_conditions.h"

namespace iowatch::daemon {

// One reading; what could not be read is absent.
struct ConditionsReading {
  double monotonic_seconds = 0;
  std::optional<collectors::DiskCounters> disk;     // sysfs dev/block/M:m/stat of the whole disk
  std::optional<collectors::Pressure> io_pressure;  // procfs pressure/io
  // procfs thread-self/schedstat's run_delay: the time the calling thread
  // (the probe's) waited on a run queue, ns.
  std::optional<uint64_t> thread_run_delay_ns;
  std::optional<collectors::CpuTicks> cpu;  // procfs stat, the "cpu" line
};

// Reads on the calling thread: thread-self is the probe's thread when the
// runner calls it.
ConditionsReading ReadConditions(const FileTree& procfs, const FileTree& sysfs, DeviceId disk);
// The run_delay field of a schedstat file; nullopt when malformed.
std::optional<uint64_t> RunDelayNs(std::string_view schedstat);

// The largest request the disk's queue takes (queue/max_sectors_kb), in
// bytes; 0 when it cannot be read.
uint64_t MaxRequestBytes(const FileTree& sysfs, DeviceId disk);

// The disk's load between two readings taken while the probe did nothing;
// nullopt on the same terms as ComputeRunConditions.
std::optional<probes::LoadWindow> ComputeLoadWindow(const ConditionsReading& before,
                                                    const ConditionsReading& after);

// The run's conditions between the two readings; nullopt without the disk's
// counters in both, a span that is not positive, or counters that went
// backwards (the disk was replaced under the run). `max_request_bytes`
// splits the probe's I/Os into the requests the disk counts (0: unsplit).
std::optional<probes::RunConditions> ComputeRunConditions(const ConditionsReading& before,
                                                          const ConditionsReading& after,
                                                          const probes::ProbeResult& own,
                                                          uint64_t max_request_bytes,
                                                          bool other_probe);

}  // namespace iowatch::daemon
