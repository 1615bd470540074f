// Runs one probe job on an opened engine, the way fio's core drives an
// ioengine: the runner owns offsets (OffsetGenerator), the read/write mix,
// pacing (rate_iops), ramp time, runtime, the hard time limit, fsync=N, and
// every timestamp: start when an I/O is prepared, issue when Submit returns
// (slat = issue − start, async engines only), completion when Reap returns it
// (clat = completion − issue, lat = completion − start). Statistics of the
// ramp are discarded. I/O buffers (iodepth × bs, aligned) are allocated here
// and filled with incompressible data.
// Errors: a failed I/O (−errno) is counted and ends the run with
// RunEnd::kFailed and the errno in `error`; a short transfer is counted and
// the run goes on; cancellation and the hard limit end the run with partial
// results. RunJob only returns an error (no result) when the engine cannot
// be opened.
// Thread-safety: one run per call; `cancel` may be set from another thread
// or a signal handler.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "common/result.h"
#include "probes/engines/engine.h"
#include "probes/run/held_io.h"
#include "probes/run/probe_clock.h"
#include "probes/run/probe_result.h"
#include "probes/spec/job_spec.h"

namespace iowatch::probes {

// Where the runner may do I/O: [region_offset, region_offset + region_size)
// of `fd`, offsets and lengths multiples of offset_alignment.
struct RunTarget {
  int fd = -1;
  uint64_t region_offset = 0;
  uint64_t region_size = 0;
  uint32_t memory_alignment = 4096;
  uint32_t offset_alignment = 512;
};

struct RunProgress {
  double fraction_done = 0;  // 0..1, by time (time_based) or by I/O amount
  double read_iops = 0;      // over the last progress interval
  double write_iops = 0;
  double read_bytes_per_second = 0;
  double write_bytes_per_second = 0;
  std::chrono::nanoseconds eta{0};
  bool ramping = false;
};

struct RunOptions {
  ProbeClock* clock = nullptr;                // null: a SteadyProbeClock
  const std::atomic<bool>* cancel = nullptr;  // set → stop soon, keep partial results
  // Ends the run even if I/Os hang; 0 = runtime + ramp_time + 10 s
  // (or 10 minutes when the run has no runtime).
  std::chrono::nanoseconds hard_limit{0};
  std::function<void(const RunProgress&)> on_progress;  // called about every progress_interval
  // Called once, on the runner's thread, when the measured phase starts
  // (after ramp_time): where the daemon reads the device's counters, so
  // that what else the device did is measured over the same span.
  std::function<void()> on_measuring;
  std::chrono::nanoseconds progress_interval = std::chrono::seconds(1);
  // Where I/Os a hung device still holds at the end of the run go, with
  // their context and buffers (held_io.h), for the caller to free once they
  // complete: the daemon holds them and stops probing the device meanwhile.
  // Unset (a one-shot command that exits soon): they are leaked.
  std::function<void(std::unique_ptr<HeldIo>)> keep_abandoned;
};

// Decisions worth knowing when reading a result:
// - Seeds: randseed, else kDefaultRandSeed (offset_generator.h) when
//   randrepeat, else std::random_device; reads, writes and the rw mix draw
//   from separate streams derived from that seed.
// - The I/O amount (IoAmount(), or the region when 0) and number_ios count
//   I/Os issued after the ramp, so the measured phase does the whole amount;
//   number_ios also caps time_based runs, as in fio. runtime caps every run
//   and is measured after the ramp.
// - fsync=N: after every Nth write the runner waits for the writes in flight
//   to complete, then issues one fsync alone (a barrier, as fio's libaio
//   engine does). When the I/O amount ends the run, its last N writes are
//   synced too, so W writes issue W / N fsyncs (fio skips that final one);
//   fsync time is not part of any latency statistic.
// - runtime of a direction = the measured phase's wall time (fio's
//   update_runtime) for each direction that completed an I/O.
// - RunJob also returns an error, before opening the engine, when bs is 0 or
//   4 GiB or more, iodepth is 0, the region holds no whole block, bs or the
//   region offset is not a multiple of offset_alignment, or the buffers cannot
//   be allocated.
Result<ProbeResult> RunJob(const JobSpec& spec, ProbeEngine& engine, const RunTarget& target,
                           const RunOptions& options);

}  // namespace iowatch::probes
