// A device characterisation sweep: the grid of short runs (block size ×
// iodepth × direction × pattern × mode), each point as the JobSpec the probe
// engine runs, and what a point measured. Modes: buffered (direct=0, the
// file's cached pages dropped before each run), direct (direct=1) and raw
// (direct=1 on the block device itself, read-only without --destructive).
// The time budget bounds the whole sweep: every point runs budget / points.
// Thread-safety: plain values and pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_names.h"
#include "common/result.h"
#include "probes/run/probe_result.h"
#include "probes/spec/job_spec.h"

namespace iowatch::probes {

enum class SweepMode { kBuffered, kDirect, kRaw };
// --mode's words, in the order its help and errors list them.
inline constexpr EnumName<SweepMode> kSweepModes[] = {
    {SweepMode::kDirect, "direct"}, {SweepMode::kBuffered, "buffered"}, {SweepMode::kRaw, "raw"}};
static_assert(NamesEveryValue<kSweepModes>());
std::string_view ToString(SweepMode mode);

// Which latency a sweep reports, in fio's names: lat, from submission to
// completion (the default: what a program waits, and what the baseline
// verdicts judge), or clat, from issue to completion. They differ where the
// device completes inside the submission: this VM's disk at 64 KiB has clat
// p50 ~1 µs and slat ~90 µs, so clat alone says 64 KiB random reads take 1 µs.
enum class SweepLatency { kLat, kClat };
inline constexpr EnumName<SweepLatency> kSweepLatencies[] = {{SweepLatency::kLat, "lat"},
                                                             {SweepLatency::kClat, "clat"}};
static_assert(NamesEveryValue<kSweepLatencies>());
std::string_view ToString(SweepLatency latency);  // "lat", "clat"

struct SweepGrid {
  std::vector<uint64_t> block_sizes = {4096, 16384, 65536, 262144, 1 << 20, 4 << 20};
  std::vector<uint32_t> depths = {1, 2, 4, 8, 16, 32, 64};
  std::vector<bool> writes = {false, true};   // read, write
  std::vector<bool> randoms = {true, false};  // random, sequential
  std::vector<SweepMode> modes = {SweepMode::kDirect, SweepMode::kBuffered};
  std::chrono::nanoseconds budget = std::chrono::minutes(10);
};

// A budget left for each point below this is refused: a run that short
// measures its own start-up.
inline constexpr std::chrono::milliseconds kMinPointRuntime{200};

struct SweepPoint {
  SweepMode mode = SweepMode::kDirect;
  bool write = false;
  bool random = true;
  uint64_t block_size = 4096;
  uint32_t iodepth = 1;
  bool operator==(const SweepPoint&) const = default;
};

// What one point measured (the direction it ran), from its ProbeResult.
// Percentiles are 0 where unknown (a sweep stored before lat was kept).
struct SweepMeasure {
  double iops = 0;
  double bytes_per_second = 0;
  uint64_t lat_p50_ns = 0;
  uint64_t lat_p99_ns = 0;
  uint64_t clat_p50_ns = 0;
  uint64_t clat_p99_ns = 0;
  double cpu_percent = 0;          // user + system over the run
  double cpu_seconds_per_gib = 0;  // CPU time per GiB moved
  std::string end = "completed";

  uint64_t P50(SweepLatency latency) const {
    return latency == SweepLatency::kLat ? lat_p50_ns : clat_p50_ns;
  }
  uint64_t P99(SweepLatency latency) const {
    return latency == SweepLatency::kLat ? lat_p99_ns : clat_p99_ns;
  }
};

struct SweepSample {
  SweepPoint point;
  SweepMeasure measure;
};

// Points in a stable order: mode, direction, pattern, block size, depth.
std::vector<SweepPoint> SweepPoints(const SweepGrid& grid);

// Each point's runtime: the budget over the points, whole milliseconds.
// Errors (kInvalidArgument): an empty grid part, or less than
// kMinPointRuntime per point (saying how many points and what budget would do).
Result<std::chrono::milliseconds> PointRuntime(const SweepGrid& grid);

// The job of one point on `base` (its name, engine, target and size, so every
// point runs on the same file): rw, bs, iodepth, direct, a time_based runtime.
JobSpec PointSpec(const JobSpec& base, const SweepPoint& point, std::chrono::milliseconds runtime);
std::string PointName(const SweepPoint& point);  // "direct-randread-4k-qd1"

SweepMeasure MeasureOf(const ProbeResult& result, bool write);

// "4k", "256k", "1m": the sweep's block size spelling (fio's).
std::string SizeText(uint64_t bytes);
// "812 MiB/s", "1.2 GiB/s".
std::string RateText(double bytes_per_second);

}  // namespace iowatch::probes
