#include "probes/pipeline/run_on_target.h"

#include <cerrno>
#include <memory>

#include "probes/engines/engine.h"

namespace iowatch::probes {

Result<ProbeResult> RunOnTarget(const JobSpec& spec, const PreparedTarget& target,
                                const RunOptions& options) {
  const std::unique_ptr<ProbeEngine> engine = MakeEngine(spec.engine, spec.uring);
  const RunTarget run_target{target.fd, target.region_offset, target.region_size,
                             target.memory_alignment, target.offset_alignment};
  Result<ProbeResult> result = RunJob(spec, *engine, run_target, options);
  if (!result) return ErrorOf(result);
  // fio reports the bare errno; say what it means with hipri.
  if (spec.uring.hipri && result->error && result->error->os_errno == EOPNOTSUPP) {
    result->error->message +=
        " (hipri: polled I/O needs a device with poll queues, e.g. NVMe with nvme.poll_queues > 0)";
  }
  return result;
}

}  // namespace iowatch::probes
