// The series a scrape of the simulated daemons would have stored, as
// VictoriaMetrics' JSON line import takes them (/api/v1/import: one line per
// series, {"metric":{...},"values":[...],"timestamps":[...]}). Names and
// labels are the daemon's (daemon/metrics/probe_metrics_renderer.cc,
// probe_condition_families.cc, metrics_renderer.cc's iowatch_disk_info), with
// the instance and job labels a scrape adds; only the series the fleet rules
// and IowatchProbeRegression read, and the passive judge's regression and
// ratio (docs/metrics.md, "Passive judge"). One sample per scrape point, each gauge
// holding the last run's value between runs as the daemon's /metrics does.
// Thread-safety: reentrant.
#pragma once

#include <string>

#include "tests/bench/fleet/disk_timeline.h"

namespace iowatch::fleet {

// The workload fingerprint every host's randread-4k-qd1 shares (a name and a
// directory do not change it: iowatch_probe_job_info).
inline constexpr std::string_view kFingerprint = "9b1c2f3e4d5a6b70";

struct LineCounts {
  size_t series = 0;
  size_t samples = 0;
};

// Appends the disk's series to `out`.
LineCounts AppendDiskSeries(const Fleet& fleet, const DiskSpec& disk, const DiskTimeline& timeline,
                            std::string& out);

}  // namespace iowatch::fleet
