// The passive judge in the fleet simulation: each simulated disk's own
// production reads cut into windows (a minute, as the daemon's feed cuts
// them) and judged by the daemon's PassiveJudge with its default policy,
// from the same DiskSpec and fault timeline as its probe runs:
//
//   requests = the host's load shape (diurnal_disk.h: the level of the day
//              between night_load and peak_load, × a lognormal of σ
//              load_noise, × 4 in a burst_chance of windows) × the window
//   latency  = the model's QD1 latency × (1 + rate / load_scale)
//              × (1 + steal_slope × steal) / SpeedAt(disk, t)
//              × a lognormal of σ² = σ_dev² + cv² / requests
//
// the same load and steal shapes and slopes the probe runs slow with, the
// same SpeedAt (the disk's batch speed, its gradual or abrupt fault, its
// firmware), σ_dev the recording's run-to-run spread and cv its runs'
// per-request spread (recorded_spread.h). A window in which a probe ran is
// left unjudged (`probe`), as the daemon leaves it; a host down for its
// update has no windows, and its daemon restarts with the judge as its
// store kept it. What a scrape would read at each scrape point is kept in the
// disk's Scrapes (the regression gauge, the last judged window's ratio,
// the last window's mean latency and requests, the judged windows since the
// daemon started: what the passive alerts and peer rules read).
// Thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "tests/bench/fleet/disk_timeline.h"
#include "tests/bench/fleet/fleet_layout.h"

namespace iowatch::fleet {

struct PassiveNoise {
  double sigma_dev = 0.1;  // log units: a window's own scatter, whatever its requests
  double request_cv = 1;   // one request's latency: σ over mean
};

// A probe run's span on the disk, [start_ms, end_ms).
using RunSpan = std::pair<int64_t, int64_t>;

// Judges the disk's windows of `window_ms` over the fleet's span and fills
// the passive fields of `timeline` (its scrapes and counts).
void SimulatePassive(const Fleet& fleet, const DiskSpec& disk, const PassiveNoise& noise,
                     int64_t window_ms, const std::vector<RunSpan>& runs, DiskTimeline& timeline);

}  // namespace iowatch::fleet
