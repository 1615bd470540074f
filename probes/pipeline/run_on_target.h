// The probe pipeline's floor: what a run is asked (ProbeRunOptions) and
// what it measured (ProbeOutcome), and its last step, RunOnTarget: the
// engine made and the job run on a prepared target. RunProbe (one job,
// run_probe.h) and RunJobSet (several, and each clone: run_job_set.h) both
// end here, so neither calls the other for it.
// Thread-safety: one call per thread; nothing shared.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

#include "common/result.h"
#include "probes/run/job_runner.h"
#include "probes/run/probe_result.h"
#include "probes/spec/job_spec.h"
#include "probes/target/probe_target.h"

namespace iowatch::probes {

struct ProbeRunOptions {
  TargetPolicy policy;
  // Create a directory target's missing directories: the daemon's jobs live
  // under its own state directory; `iowatch probe` refuses a missing one, so
  // that a typo does not leave a new tree behind.
  bool create_directory = false;
  RunOptions run;  // cancel, hard_limit, on_progress (the clock stays the real one)
  // Called once the target is ready (created, filled), before the first
  // measured I/O, with the block device holding its data: the daemon times
  // a first fill apart from the run's timeout; `iowatch probe` finds the
  // disk whose counters make fio's disk_util.
  std::function<void(dev_t device)> on_prepared;
};

// What a probe run measured, and where.
struct ProbeOutcome {
  std::string target_path;
  dev_t device = 0;           // the block device holding the target's data
  int64_t start_unix_ms = 0;  // wall clock when the I/O started (after any fill)
  ProbeResult result;         // result.end says how the run ended
};

// The engine made and the job run on a prepared target: RunProbe's last step
// and each clone's in RunJobSet. Errors: the engine could not start.
Result<ProbeResult> RunOnTarget(const JobSpec& spec, const PreparedTarget& target,
                                const RunOptions& options);

}  // namespace iowatch::probes
