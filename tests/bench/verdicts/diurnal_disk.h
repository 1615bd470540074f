// DiurnalDisk: a synthetic probe series on a disk whose neighbours follow a
// day (issue 27's schedule question; the fleet simulation can share it).
// Others' load follows the hours (quiet at night, a peak in the afternoon)
// with run-to-run noise and bursts; the hypervisor's steal rises with the
// day; the probe (4 KiB random reads, QD1) slows with both, as this VM's
// disk did (steal slows the virtual disk itself: run_stress.h), with a
// lognormal run-to-run noise. Each run is a RunRecord the judge takes as it
// takes the daemon's: metrics, a histogram, conditions.
// Thread-safety: none; one owner.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>

#include "probes/baseline/run_metrics.h"
#include "probes/baseline/run_record.h"
#include "tests/unit/probes/baseline/synthetic_disk.h"

namespace iowatch::probes::test_data {

struct DiurnalShape {
  double base_latency_us = 100;  // the quiet, healthy disk's mean
  double peak_load = 3000;       // others' requests/s at the afternoon peak
  double night_load = 30;        // and at night
  double load_noise = 0.35;      // lognormal σ of the load from run to run
  double burst_chance = 0.05;    // a run beside a burst of 4× the load
  double peak_steal = 0.25;      // the hypervisor's steal at the peak
  double night_steal = 0.01;
  double run_noise = 0.06;  // lognormal σ of the probe's mean from run to run
  // How the probe slows: latency × (1 + load / load_scale) × (1 + steal_slope × steal).
  double load_scale = 4000;
  double steal_slope = 2;
};

class DiurnalDisk {
 public:
  DiurnalDisk(uint64_t seed, DiurnalShape shape = {}) : rng_(seed), shape_(shape) {}

  // A run that starts at `start_ms` (ms since the epoch; hour 0 is midnight)
  // on a disk `slowdown` times slower than healthy (1: healthy).
  RunRecord Run(int64_t id, int64_t start_ms, double slowdown = 1) {
    const double hour = static_cast<double>(start_ms % kDayMs) / 3'600'000;
    // 0 at 4:00, 1 at 16:00.
    const double day = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * (hour - 4) / 24);
    std::lognormal_distribution<double> load_noise(0, shape_.load_noise);
    std::uniform_real_distribution<double> unit(0, 1);
    double load =
        (shape_.night_load + day * (shape_.peak_load - shape_.night_load)) * load_noise(rng_);
    if (unit(rng_) < shape_.burst_chance) load *= 4;
    const double steal =
        std::min(0.6, (shape_.night_steal + day * (shape_.peak_steal - shape_.night_steal)) *
                          (0.5 + unit(rng_)));
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

  static constexpr int64_t kDayMs = int64_t{24} * 3'600'000;

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
