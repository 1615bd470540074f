#include "probes/run_probe.h"

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "common/clock.h"
#include "probes/engines/engine.h"

namespace iowatch::probes {
namespace {

bool Cancelled(const RunOptions& run) { return run.cancel != nullptr && run.cancel->load(); }

ProbeOutcome NothingRun(const JobSpec& spec, int64_t start_unix_ms) {
  ProbeOutcome outcome;
  outcome.start_unix_ms = start_unix_ms;
  outcome.result.spec = spec;
  outcome.result.end = RunEnd::kInterrupted;
  return outcome;
}

}  // namespace

Result<ProbeOutcome> RunProbe(const JobSpec& spec, const ProbeRunOptions& options) {
  if (Cancelled(options.run)) return NothingRun(spec, WallUnixMs());
  if (options.create_directory && !spec.directory.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(spec.directory, ec);
    if (ec) {
      return MakeError(ErrorCode::kIo, "cannot create the job's directory: " + ec.message(),
                       spec.directory);
    }
  }
  Result<PreparedTarget> target = PrepareTarget(spec, options.policy, options.run.cancel);
  // A fill the cancel flag interrupted: no I/O was measured (the fill's
  // progress stays in the file's marker).
  if (!target && target.error().os_errno == ECANCELED && Cancelled(options.run)) {
    return NothingRun(spec, WallUnixMs());
  }
  if (!target) return std::unexpected(target.error());
  if (options.on_prepared) options.on_prepared(target->device);
  // Creating and filling the file may have taken a while: look again.
  if (Cancelled(options.run)) return NothingRun(spec, WallUnixMs());
  const std::unique_ptr<ProbeEngine> engine = MakeEngine(spec.engine, spec.uring);
  const RunTarget run_target{target->fd, target->region_offset, target->region_size,
                             target->memory_alignment, target->offset_alignment};
  const int64_t start_unix_ms = WallUnixMs();
  Result<ProbeResult> result = RunJob(spec, *engine, run_target, options.run);
  if (!result) return std::unexpected(result.error());
  // fio reports the bare errno; say what it means with hipri.
  if (spec.uring.hipri && result->error && result->error->os_errno == EOPNOTSUPP) {
    result->error->message +=
        " (hipri: polled I/O needs a device with poll queues, e.g. NVMe with nvme.poll_queues > 0)";
  }
  ProbeOutcome outcome;
  outcome.target_path = target->path;
  outcome.device = target->device;
  outcome.start_unix_ms = start_unix_ms;
  outcome.result = std::move(*result);
  return outcome;
}

}  // namespace iowatch::probes
