// DiskTimeline: one simulated disk's probe over the fleet's span as the daemon
// would run, judge and publish it. Runs follow the bundled schedule (every
// 15 min ± 1 min, each disk its own phase) on a DiurnalDisk (diurnal_disk.h)
// of its host's load, its model's latency, its own speed and fault, and this
// machine's recorded run-to-run noise; each run goes through the daemon's own
// judge (JudgeRun, the default BaselinePolicy). What /metrics would say is
// sampled at every scrape point (a multiple of the interval): the last
// successful run's IOPS and mean latency, whether it was contended, those of
// the last uncontended run with its start, and the last judged run's verdicts with the regressions
// the hysteresis holds now (daemon/scheduling/probe_recorder.cc publishes them so). Thread-safety:
// SimulateDisk is reentrant; one call per disk.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tests/bench/fleet/fleet_layout.h"
#include "tests/bench/fleet/recorded_spread.h"

namespace iowatch::fleet {

// The metrics the default policy judges, in the order Scrape keeps them.
inline constexpr std::array<std::string_view, 7> kJudgedMetrics = {"iops",
                                                                   "bandwidth_bytes",
                                                                   "lat_mean_seconds",
                                                                   "lat_p50_seconds",
                                                                   "lat_p90_seconds",
                                                                   "lat_p99_seconds",
                                                                   "lat_p99_9_seconds"};

struct Scrape {
  bool up = false;  // the daemon is up and has a run to publish
  bool contended = false;
  uint8_t verdicts = 0;   // bit i: a verdict on kJudgedMetrics[i] is published
  uint8_t regressed = 0;  // bit i: kJudgedMetrics[i] regressed
  float iops = 0;
  float lat_mean_seconds = 0;
  // The last uncontended run's, kept through the contended runs after it
  // (iowatch_probe_uncontended_*); start 0: none since the daemon started.
  float uncontended_iops = 0;
  float uncontended_lat_mean_seconds = 0;
  int64_t uncontended_start_ms = 0;
  std::array<float, kJudgedMetrics.size()> ratio{};
  // The passive judge's read series (passive_timeline.h): exported from its
  // first window of enough requests since the daemon started; its ratio
  // from its first judged window.
  bool passive_series = false;
  bool passive_judged = false;
  bool passive_regressed = false;
  float passive_ratio = 0;  // the last judged window's observed / predicted
  // The last window's mean latency and requests.
  float passive_observed_seconds = 0;
  float passive_requests = 0;
  uint32_t passive_judged_total = 0;  // judged windows since the daemon started
  // The production totals since the daemon started (the peer rules' inputs).
  double passive_requests_total = 0;
  double passive_seconds_total = 0;
  // The judged windows' latency summed as observed and as predicted.
  double passive_judged_seconds_total = 0;
  double passive_predicted_seconds_total = 0;
};

// The passive judge's windows on one disk (passive_timeline.h).
struct PassiveCounts {
  size_t windows = 0;  // with a request, the daemon up
  size_t judged = 0;
  size_t healthy_raises = 0;    // raised on a healthy disk, or before its fault
  int64_t first_raise_ms = -1;  // the first raise at or after the fault's start
};

struct DiskCounts {
  size_t runs = 0;
  size_t judged = 0;
  size_t contended = 0;         // others' I/O or the CPU (iowatch_probe_contended 1)
  size_t healthy_raises = 0;    // regressions raised on a healthy disk, or before its fault
  int64_t first_raise_ms = -1;  // the first raise at or after the fault's start
  PassiveCounts passive;
};

struct DiskTimeline {
  std::vector<Scrape> scrapes;  // scrape i at fleet.start_ms + i × kIntervalMs
  DiskCounts counts;
};

size_t ScrapeCount(const Fleet& fleet);
DiskTimeline SimulateDisk(const Fleet& fleet, const DiskSpec& disk, const RecordedSpread& noise);

}  // namespace iowatch::fleet
