// RunProbe: the probe pipeline in one call, the one both `iowatch probe` and
// the daemon's probe worker use, so that a job measures the same thing from
// either: the job's directory is created (when asked), the
// target prepared (created, filled and marked once, foreign files and block
// devices guarded: target/probe_target.h), the engine made, and the job run
// (run/job_runner.h) with the caller's cancel flag, hard limit and progress.
// A run cancelled before its first I/O (the flag set before the call, or
// while the target was being filled) does no I/O: its result ends
// kInterrupted and is empty.
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

// Errors: the directory could not be created, the target was refused or
// could not be prepared, the engine could not start (e.g. io_uring refused,
// kUnsupported). An I/O error or the hard limit during the run is not an
// error here: the outcome carries the partial result (kFailed, kTimedOut).
// With numjobs > 1, the clones run as threads and the outcome is their sum
// (SumResults; target and device the first clone's).
Result<ProbeOutcome> RunProbe(const JobSpec& spec, const ProbeRunOptions& options);

// The engine made and the job run on a prepared target: RunProbe's last step
// and each clone's in RunJobSet. Errors: the engine could not start.
Result<ProbeResult> RunOnTarget(const JobSpec& spec, const PreparedTarget& target,
                                const RunOptions& options);

}  // namespace iowatch::probes
