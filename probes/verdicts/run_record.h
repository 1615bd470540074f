// RunRecord: one probe run as it is kept: the job, its parameters and
// target, when and how it ran, everything it measured and the metrics a
// baseline is learned from. The store writes and reads these; baselines are
// learned from them (LearnBaseline in baseline.h).
// Thread-safety: plain value.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probes/run/probe_result.h"
#include "probes/verdicts/run_conditions.h"
#include "probes/verdicts/run_metrics.h"

namespace iowatch::probes {

struct RunRecord {
  int64_t id = 0;  // assigned by AddRun (ignored there), set by the reads
  std::string job;
  std::string fingerprint;  // JobFingerprint(result.spec) when left empty
  std::string job_options;  // JobOptionsText(result.spec) when left empty
  std::string device;       // "major:minor" of the target
  std::string model;        // device model where known, else ""
  std::string kernel;       // uname -r
  int64_t start_unix_ms = 0;
  int64_t duration_ms = 0;
  bool ok = true;
  std::string error;  // why the run failed ("" when ok)
  // Everything measured. On reading, result.spec is rebuilt from job_options
  // (left at its defaults if those options no longer parse).
  ProbeResult result;
  // ExtractMetrics(result), kept for baselines; the store fills it on reading
  // when a run was written without it.
  std::vector<MetricSample> metrics;
  // What else the device and host did during the run; nullopt when not
  // measured (a run stored before iowatch measured them, `iowatch probe`).
  std::optional<RunConditions> conditions;
  // What of it could not be read back, one line each (a stored histogram that
  // no longer decodes: "read clat histogram: ..."), the rest of the run being
  // kept: its figures and stored metrics still count. Empty when whole.
  std::vector<std::string> damage;
};

}  // namespace iowatch::probes
