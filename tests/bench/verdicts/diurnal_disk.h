// DiurnalDisk: a synthetic probe series on a disk whose neighbours follow a
// day (how long the bundled schedule takes to a verdict, schedule_simulation.cc;
// the fleet simulation shares it).
// Others' load follows the hours (by default quiet at night, a peak in the
// afternoon; or a batch job at night) with run-to-run noise and bursts; the
// hypervisor's steal rises with the day (or comes in bursts at random
// times, or is none); the probe (4 KiB random reads, QD1) slows with both, as this VM's
// disk did (steal slows the virtual disk itself: run_stress.h), with a
// lognormal run-to-run noise. Each run is a RunRecord the judge takes as it
// takes the daemon's: metrics, a histogram, conditions.
// Thread-safety: none; one owner.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <numbers>
#include <random>
#include <vector>

#include "common/enum_names.h"
#include "probes/verdicts/run_metrics.h"
#include "probes/verdicts/run_record.h"
#include "tests/unit/probes/verdicts/synthetic_disk.h"

namespace iowatch::probes::test_data {

// What others' load does over the day: a day's work peaking in the afternoon,
// or a batch job at night (full load from 01:00 to 05:00, reached and left
// within kBatchRampMs, as a job that starts and ends).
enum class LoadShape { kAfternoon, kNight };
inline constexpr std::array<EnumName<LoadShape>, 2> kLoadShapes{{
    {LoadShape::kAfternoon, "afternoon"},
    {LoadShape::kNight, "night"},
}};
static_assert(NamesEveryValue<kLoadShapes>());

// What the hypervisor's steal does: rise with the (afternoon) day whatever
// the load's shape, come in bursts at random times independent of the load
// (none between them), or never.
enum class StealShape { kDiurnal, kBursts, kNone };
inline constexpr std::array<EnumName<StealShape>, 3> kStealShapes{{
    {StealShape::kDiurnal, "diurnal"},
    {StealShape::kBursts, "bursts"},
    {StealShape::kNone, "none"},
}};
static_assert(NamesEveryValue<kStealShapes>());

// A burst of steal: [start_ms, end_ms) at `level` (the runs' steal is the
// level × their noise).
struct StealBurst {
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  double level = 0;
};

inline constexpr int64_t kHourMs = 3'600'000;
inline constexpr int64_t kBatchStartMs = 1 * kHourMs;  // LoadShape::kNight's job
inline constexpr int64_t kBatchEndMs = 5 * kHourMs;
inline constexpr int64_t kBatchRampMs = 10 * 60'000;

struct DiurnalShape {
  double base_latency_us = 100;  // the quiet, healthy disk's mean
  double peak_load = 3000;       // others' requests/s at the peak (afternoon or batch)
  double night_load = 30;        // and at the quietest
  double load_noise = 0.35;      // lognormal σ of the load from run to run
  double burst_chance = 0.05;    // a run beside a burst of 4× the load
  double peak_steal = 0.25;      // the hypervisor's steal at the peak
  double night_steal = 0.01;
  double run_noise = 0.06;  // lognormal σ of the probe's mean from run to run
  // How the probe slows: latency × (1 + load / load_scale) × (1 + steal_slope × steal).
  double load_scale = 4000;
  double steal_slope = 2;
  LoadShape load = LoadShape::kAfternoon;
  StealShape steal = StealShape::kDiurnal;
  // StealShape::kBursts: bursts every steal_burst_gap_hours on average
  // (exponential gaps), each lasting between steal_burst_min_minutes and
  // steal_burst_max_minutes (log-uniform) at a level between a quarter of
  // peak_steal and peak_steal (uniform); DrawStealBursts fills steal_bursts.
  double steal_burst_gap_hours = 4;
  double steal_burst_min_minutes = 2;
  double steal_burst_max_minutes = 60;
  std::vector<StealBurst> steal_bursts;  // sorted, disjoint
};

// The afternoon's day at `ms` (ms since the epoch; hour 0 is midnight): 0 at
// 4:00, 1 at 16:00.
inline double AfternoonDay(int64_t ms) {
  constexpr int64_t kDayMs = 24 * kHourMs;
  const double hour = static_cast<double>(ms % kDayMs) / 3'600'000;
  return 0.5 - 0.5 * std::cos(2 * std::numbers::pi * (hour - 4) / 24);
}

// The night's batch job at `ms`: 0 outside kBatchStartMs..kBatchEndMs, 1
// inside but for the ramps at either end.
inline double NightBatch(int64_t ms) {
  const int64_t t = ms % (24 * kHourMs);
  if (t < kBatchStartMs || t >= kBatchEndMs) return 0;
  const int64_t edge = std::min(t - kBatchStartMs, kBatchEndMs - t);
  return std::min(1.0, static_cast<double>(edge) / static_cast<double>(kBatchRampMs));
}

// How far others' load is from night_load (0) to peak_load (1) at `ms`.
inline double LoadLevel(const DiurnalShape& shape, int64_t ms) {
  return shape.load == LoadShape::kNight ? NightBatch(ms) : AfternoonDay(ms);
}

// The burst of `bursts` (sorted, disjoint) that holds `ms`, or none.
inline const StealBurst* BurstAt(const std::vector<StealBurst>& bursts, int64_t ms) {
  const auto after = std::ranges::upper_bound(bursts, ms, {}, &StealBurst::start_ms);
  if (after == bursts.begin() || ms >= std::prev(after)->end_ms) return nullptr;
  return &*std::prev(after);
}

// The hypervisor's steal at `ms` before a run's noise.
inline double StealLevel(const DiurnalShape& shape, int64_t ms) {
  switch (shape.steal) {
    case StealShape::kDiurnal:
      return shape.night_steal + AfternoonDay(ms) * (shape.peak_steal - shape.night_steal);
    case StealShape::kBursts: {
      const StealBurst* burst = BurstAt(shape.steal_bursts, ms);
      return burst == nullptr ? 0 : burst->level;
    }
    case StealShape::kNone:
      return 0;
  }
  return 0;
}

// Bursts of steal over [from_ms, to_ms) drawn from `seed` by `shape`'s
// steal_burst_* and peak_steal: the same seed, the same bursts.
inline std::vector<StealBurst> DrawStealBursts(uint64_t seed, int64_t from_ms, int64_t to_ms,
                                               const DiurnalShape& shape) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap_hours(1 / shape.steal_burst_gap_hours);
  std::uniform_real_distribution<double> log_minutes(std::log(shape.steal_burst_min_minutes),
                                                     std::log(shape.steal_burst_max_minutes));
  std::uniform_real_distribution<double> level(0.25 * shape.peak_steal, shape.peak_steal);
  std::vector<StealBurst> bursts;
  for (int64_t at = from_ms;;) {
    at += static_cast<int64_t>(gap_hours(rng) * static_cast<double>(kHourMs));
    if (at >= to_ms) return bursts;
    StealBurst b;
    b.start_ms = at;
    b.end_ms = at + static_cast<int64_t>(std::exp(log_minutes(rng)) * 60'000);
    b.level = level(rng);
    bursts.push_back(b);
    at = b.end_ms;
  }
}

class DiurnalDisk {
 public:
  DiurnalDisk(uint64_t seed, DiurnalShape shape = {}) : rng_(seed), shape_(shape) {}

  // A run that starts at `start_ms` (ms since the epoch; hour 0 is midnight)
  // on a disk `slowdown` times slower than healthy (1: healthy).
  RunRecord Run(int64_t id, int64_t start_ms, double slowdown = 1) {
    // Every shape draws the same numbers in the same order: a seed's runs
    // differ between shapes only by their load and steal.
    const double day = LoadLevel(shape_, start_ms);
    std::lognormal_distribution<double> load_noise(0, shape_.load_noise);
    std::uniform_real_distribution<double> unit(0, 1);
    double load =
        (shape_.night_load + day * (shape_.peak_load - shape_.night_load)) * load_noise(rng_);
    if (unit(rng_) < shape_.burst_chance) load *= 4;
    const double steal = std::min(0.6, StealLevel(shape_, start_ms) * (0.5 + unit(rng_)));
    return RunAt(id, start_ms, load, steal, slowdown);
  }

  // A run beside `load` requests/s of others' I/O with `steal`, whatever the
  // hour (a caller that draws its own conditions).
  RunRecord RunAt(int64_t id, int64_t start_ms, double load, double steal, double slowdown = 1) {
    std::lognormal_distribution<double> run_noise(0, shape_.run_noise);
    const double lat_us = shape_.base_latency_us * (1 + load / shape_.load_scale) *
                          (1 + shape_.steal_slope * steal) * run_noise(rng_) * slowdown;
    return Make(id, start_ms, lat_us, load, steal);
  }

  static constexpr int64_t kDayMs = 24 * kHourMs;

 private:
  static RunRecord Make(int64_t id, int64_t start_ms, double lat_us, double load, double steal) {
    RunRecord run;
    run.id = id;
    run.job = "randread-4k-qd1";
    run.fingerprint = "f";
    run.device = "8:0";
    run.start_unix_ms = start_ms;
    run.ok = true;
    constexpr double kSeconds = 3;  // the bundled jobs' runtime
    run.duration_ms = static_cast<int64_t>(kSeconds * 1000);
    DirectionStats& d = run.result.read;
    FillEqualLatencies(d, static_cast<uint64_t>(kSeconds * 1e6 / lat_us),
                       static_cast<uint64_t>(lat_us * 1000), kSeconds);
    run.metrics = ExtractMetrics(run.result);
    RunConditions c;
    c.seconds = kSeconds;
    c.own_requests = d.ios;
    c.own_bytes = d.bytes;
    const auto foreign = static_cast<uint64_t>(load * kSeconds);
    c.device_ios = d.ios + foreign;
    c.device_bytes = d.bytes + foreign * 16384;
    c.device_busy_seconds = kSeconds;
    c.cpu_steal = steal;
    c.cpu_wait = steal / 2;
    run.conditions = c;
    return run;
  }

  std::mt19937_64 rng_;
  DiurnalShape shape_;
};

}  // namespace iowatch::probes::test_data
