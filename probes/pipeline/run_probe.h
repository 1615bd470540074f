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

#include "common/result.h"
#include "probes/pipeline/run_on_target.h"
#include "probes/spec/job_spec.h"

namespace iowatch::probes {

// Errors: the directory could not be created, the target was refused or
// could not be prepared, the engine could not start (e.g. io_uring refused,
// kUnsupported). An I/O error or the hard limit during the run is not an
// error here: the outcome carries the partial result (kFailed, kTimedOut).
// With numjobs > 1, the clones run as threads and the outcome is their sum
// (SumResults; target and device the first clone's).
Result<ProbeOutcome> RunProbe(const JobSpec& spec, const ProbeRunOptions& options);

}  // namespace iowatch::probes
