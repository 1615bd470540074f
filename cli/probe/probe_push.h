// What `iowatch probe --push-gateway` pushes: each job's completed run as the
// daemon's iowatch_probe_* series (probe_metrics_renderer.h, the runs'
// families only), labelled probe=<job name>; a job's clones summed
// (SumResults), as the daemon sums a job of numjobs > 1. A job with a clone
// that did not complete is left out, as the daemon publishes only
// successful runs.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "probes/pipeline/run_job_set.h"
#include "probes/spec/job_set.h"

namespace iowatch::daemon {

std::string ProbeRunsExposition(const probes::JobSet& jobs,
                                const std::vector<probes::CloneOutcome>& clones,
                                double now_seconds);

}  // namespace iowatch::daemon
