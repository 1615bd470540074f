// A sweep as it is printed, stored and compared: where it ran (target, the
// device and its identity, so that sweeps of one model on two hosts, or of one
// disk before and after a firmware update, can be told apart and put side by
// side), how (engine, file size, budget, each point's runtime), every point's
// measure and the findings. JSON is its one serialisation: `iowatch sweep -o
// json`, the store's sweeps.report_json, and --compare's input.
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "probes/sweep/sweep_findings.h"
#include "probes/sweep/sweep_plan.h"

namespace iowatch::probes {

struct SweepReport {
  int64_t started_unix_ms = 0;
  std::string target;    // the probe file or block device
  std::string device;    // "vda"
  std::string identity;  // model and serial (or WWN), empty where sysfs has none
  std::string engine;
  uint64_t size = 0;  // bytes of the file or device region swept
  int64_t budget_ms = 0;
  int64_t point_runtime_ms = 0;
  // The latency the findings judge and the table and chart show; every
  // point keeps both. A sweep stored before this choice existed is kClat.
  SweepLatency latency = SweepLatency::kLat;
  std::vector<SweepSample> samples;
  std::vector<SweepFinding> findings;
};

std::string SweepJson(const SweepReport& report);
// Errors (kParse) say which field is missing or of the wrong type.
Result<SweepReport> ParseSweepJson(std::string_view json);

// --compare: each point both sweeps ran, A then B, bandwidth and p99
// (`latency`'s) with their ratios B / A, and the medians of those ratios. A
// p99 a sweep does not have (lat in one stored before it was kept) shows as
// "-" and counts in no ratio.
std::string CompareSweeps(const SweepReport& a, const SweepReport& b,
                          SweepLatency latency = SweepLatency::kLat);

}  // namespace iowatch::probes
