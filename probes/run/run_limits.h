// What a probe run may do and when it ends, settled before it starts:
// ValidateRun is every check RunJob makes before it opens the engine, and
// LimitsFor derives the run's limits from the job (see RunJob in
// job_runner.h for what they mean). Both are pure, so the runner's loop only
// compares numbers.
// Thread-safety: pure functions and plain values.
#pragma once

#include <chrono>
#include <cstdint>

#include "common/result.h"
#include "probes/run/job_runner.h"
#include "probes/spec/job_spec.h"

namespace iowatch::probes {

struct RunLimits {
  // I/Os to issue after the ramp: the I/O amount (IoAmount(), else the
  // region) in blocks rounded up, unless time_based, capped by number_ios;
  // UINT64_MAX when nothing caps it.
  uint64_t ios = UINT64_MAX;
  uint64_t runtime_ns = 0;  // after the ramp; 0: no limit
  uint64_t ramp_ns = 0;
  // From the run's start, whatever I/Os hang: `hard_limit` when positive,
  // else ramp + runtime + 10 s, or ramp + 10 minutes without a runtime.
  uint64_t hard_limit_ns = 0;
};

// kInvalidArgument when bs is 0 or 4 GiB or more, iodepth is 0, the region
// holds no whole block, or bs or the region offset is not a multiple of
// target.offset_alignment (when it is above 1).
Status ValidateRun(const JobSpec& spec, const RunTarget& target);

// The limits of a run of `spec` over `region_size` bytes; `spec` must have
// passed ValidateRun.
RunLimits LimitsFor(const JobSpec& spec, uint64_t region_size, std::chrono::nanoseconds hard_limit);

}  // namespace iowatch::probes
