// What a sweep says, in a few sentences with their numbers, per mode,
// direction and pattern:
// - knee: the smallest block size (then depth) reaching 90 % of the peak
//   bandwidth: below it the device is underused, above it bigger I/O buys
//   little.
// - latency_optimal_depth: at the smallest block size (where IOPS, not
//   bandwidth, is the limit), the depth with the most IOPS per unit of p99
//   latency (lat or clat, as the sweep reports): deeper queues add little
//   throughput and a lot of tail.
// - buffered_vs_direct: where both modes ran the same point, how often and by
//   how much the page cache beat O_DIRECT on bandwidth, and what it cost in
//   CPU per GiB (the classic AIX Direct I/O comparison).
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "probes/sweep/sweep_plan.h"

namespace iowatch::probes {

struct SweepFinding {
  std::string kind;  // "knee", "latency_optimal_depth", "buffered_vs_direct"
  SweepPoint point;  // the point it names (mode, direction, pattern; bs and depth where one)
  double value = 0;  // knee: bytes/s there; latency-optimal: IOPS; buffered: bandwidth ratio
  double ratio = 0;  // knee: share of the peak; latency-optimal: p99 ns; buffered: CPU ratio
  std::string text;
};

inline constexpr double kKneeShare = 0.9;

std::vector<SweepFinding> SweepFindings(std::span<const SweepSample> samples,
                                        SweepLatency latency = SweepLatency::kLat);

}  // namespace iowatch::probes
