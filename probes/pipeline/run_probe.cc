#include "probes/pipeline/run_probe.h"

#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "probes/pipeline/run_job_set.h"

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

// numjobs clones as threads (the daemon has threads of its own: no fork),
// reported as one job, as fio's group_reporting sums them.
Result<ProbeOutcome> RunClonesSummed(const JobSpec& spec, const ProbeRunOptions& options) {
  JobSet set;
  set.jobs.push_back({{}, {}, spec, 0, 0});
  JobSetRunOptions run;
  run.policy = options.policy;
  run.create_directory = options.create_directory;
  run.cancel = options.run.cancel;
  run.hard_limit = options.run.hard_limit;
  run.force_threads = true;
  run.on_progress = options.run.on_progress;
  run.on_measuring = options.run.on_measuring;
  bool prepared = false;  // the caller times one preparation
  run.on_prepared = [&](dev_t device) {
    if (!std::exchange(prepared, true) && options.on_prepared) options.on_prepared(device);
  };
  auto clones = RunJobSet(set, run);
  if (!clones) return ErrorOf(clones);
  if (clones->empty()) return NothingRun(spec, WallUnixMs());
  std::vector<ProbeResult> results;
  for (const CloneOutcome& clone : *clones) results.push_back(clone.outcome.result);
  ProbeOutcome outcome = std::move(clones->front().outcome);
  outcome.result = SumResults(results);
  outcome.result.spec = spec;
  return outcome;
}

}  // namespace

Result<ProbeOutcome> RunProbe(const JobSpec& spec, const ProbeRunOptions& options) {
  if (spec.numjobs > 1) return RunClonesSummed(spec, options);
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
  if (!target) return ErrorOf(target);
  if (options.on_prepared) options.on_prepared(target->device);
  // Creating and filling the file may have taken a while: look again.
  if (Cancelled(options.run)) return NothingRun(spec, WallUnixMs());
  const int64_t start_unix_ms = WallUnixMs();
  Result<ProbeResult> result = RunOnTarget(spec, *target, options.run);
  if (!result) return ErrorOf(result);
  ProbeOutcome outcome;
  outcome.target_path = target->path;
  outcome.device = target->device;
  outcome.start_unix_ms = start_unix_ms;
  outcome.result = std::move(*result);
  return outcome;
}

}  // namespace iowatch::probes
