// What one probe run measured, per direction, in fio's terms: I/Os, bytes,
// runtime, slat/clat/lat summaries and the clat histogram, plus the CPU the
// run cost, and what the engine gave up (fallbacks). Rates are derived exactly as fio derives them
// (from runtime in whole milliseconds) so our JSON agrees with fio's arithmetic. Thread-safety:
// plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "probes/engines/engine.h"
#include "probes/spec/job_spec.h"
#include "probes/stats/latency_histogram.h"
#include "probes/stats/running_stats.h"

namespace iowatch::probes {

struct DirectionStats {
  uint64_t ios = 0;                     // completed I/Os (full or short), after ramp
  uint64_t bytes = 0;                   // bytes actually transferred
  uint64_t short_ios = 0;               // completed with fewer bytes than asked
  uint64_t errors = 0;                  // completed with -errno
  std::chrono::nanoseconds runtime{0};  // time this direction was active, after ramp
  RunningStats slat;                    // submission latency (async engines only)
  RunningStats clat;                    // completion latency
  RunningStats lat;                     // total latency
  LatencyHistogram clat_histogram;
  LatencyHistogram lat_histogram;

  // fio: runtime in ms (rounded down), iops = 1000 · ios / runtime_ms,
  // bw_bytes = 1000 · bytes / runtime_ms. 0 when runtime_ms is 0.
  uint64_t RuntimeMs() const;
  double Iops() const;
  double BandwidthBytesPerSecond() const;
};

struct CpuUsage {
  double user_seconds = 0;
  double system_seconds = 0;
  uint64_t voluntary_switches = 0;
  uint64_t involuntary_switches = 0;
  uint64_t ContextSwitches() const { return voluntary_switches + involuntary_switches; }
};

enum class RunEnd {
  kCompleted,    // runtime elapsed or the I/O amount was done
  kInterrupted,  // cancelled (SIGINT, shutdown): partial results
  kTimedOut,     // the hard time limit passed: partial results
  kFailed,       // an I/O error stopped the run: partial results, `error` says why
};

struct ProbeResult {
  JobSpec spec;
  DirectionStats read;
  DirectionStats write;
  uint64_t fsyncs = 0;
  CpuUsage cpu;
  std::chrono::nanoseconds elapsed{0};  // wall time of the measured part (after ramp)
  // Results summed by SumResults (group_reporting, numjobs): how many jobs,
  // and their elapsed times added up (fio's job_runtime, which CPU
  // percentages divide by); 1 and 0 for one job's result.
  uint32_t jobs = 1;
  std::chrono::nanoseconds summed_elapsed{0};
  RunEnd end = RunEnd::kCompleted;
  std::optional<Error> error;  // first I/O error, with errno
  // What the engine could not do as the job asked (e.g. fixedbufs refused by
  // RLIMIT_MEMLOCK) and did instead; empty when it ran as asked.
  std::vector<EngineFallback> fallbacks;
  // I/Os a hung device still held when the engine gave up waiting (Close):
  // their buffers and ring were left to the kernel, never freed (a device that
  // recovers later writes into them); 0 for a normal run.
  uint32_t abandoned_ios = 0;

  // fio's job_runtime: elapsed, or the sum of the summed jobs' elapsed.
  std::chrono::nanoseconds JobRuntime() const { return jobs > 1 ? summed_elapsed : elapsed; }
};

// fio's sum_thread_stats, for group_reporting and for a job's clones in the
// daemon: I/Os, bytes, errors, fsyncs, CPU and the latency statistics and
// histograms added; each direction's runtime the longest one (so IOPS and
// bandwidth are the group's aggregate over its span); elapsed the longest,
// JobRuntime() the sum; the end the worst (failed, timed out, interrupted,
// completed), the error the first; fallbacks once each. The spec is the first
// result's. Empty input: an empty result.
ProbeResult SumResults(std::span<const ProbeResult> results);

std::string_view ToString(RunEnd end);

}  // namespace iowatch::probes
