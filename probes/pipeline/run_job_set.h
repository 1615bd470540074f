// RunJobSet: a job set (probes/spec/job_set.h) run as fio runs a job file.
// Phase by phase (a stonewall ends one), each job's numjobs clones run side
// by side: as processes (fio's default; the result comes back up a pipe,
// probes/run/result_wire.h) or, with thread (or force_threads), as threads
// of this process. Before a phase starts, its targets are prepared one after
// the other here (created, filled, guarded as RunProbe does: clones of a job
// with filename share the file, under directory each has its own
// NAME.JOBNUM.0), as fio lays out its files before it starts its jobs.
// Progress: each clone posts to a shared board; the caller's on_progress
// gets the running clones' total about every second, on the calling thread.
// on_measuring comes from the first thread clone past its ramp at once, or
// from this thread's look at the board every 10 ms (a process clone's mark).
// Cancellation (the flag): the running clones end with partial results
// (processes are sent SIGTERM), the phases after are not started.
// A clone that cannot start (its engine refused) or a process that dies
// without reporting ends kFailed with the error; the others run on.
// Thread-safety: one call at a time per process (clone processes install
// their own SIGTERM handler).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/result.h"
#include "probes/pipeline/run_on_target.h"
#include "probes/spec/job_set.h"

namespace iowatch::probes {

struct JobSetRunOptions {
  TargetPolicy policy;
  bool create_directory = false;  // as ProbeRunOptions
  const std::atomic<bool>* cancel = nullptr;
  std::chrono::nanoseconds hard_limit{0};  // each clone's (RunOptions)
  // Threads whatever the jobs' `thread` says: a process with threads of its
  // own (the daemon) must not fork.
  bool force_threads = false;
  std::function<void(const RunProgress&)> on_progress;  // null: no progress
  std::function<void(dev_t device)> on_prepared;        // each target, when ready
  std::function<void()> on_measuring;  // once, when the first clone is past its ramp
};

struct CloneOutcome {
  size_t job = 0;       // index into JobSet::jobs
  uint32_t jobnum = 0;  // which of the job's clones
  ProbeOutcome outcome;
};

// Outcomes in job order, then clone order, for the phases that ran. Errors:
// a target refused or not prepared (as RunProbe), a pipe, mapping or fork
// that failed.
Result<std::vector<CloneOutcome>> RunJobSet(const JobSet& set, const JobSetRunOptions& options);

}  // namespace iowatch::probes
