// The probe families' shared shape (private to daemon/metrics): what a
// family's writer reads (the recorder's snapshot, the scheduler's status,
// the time), the family's name, type and help, and the lists of families
// kept in files of their own. probe_metrics_renderer.cc sorts them all and
// renders them.
// Thread-safety: plain values and functions over immutable snapshots.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "daemon/exposition/exposition.h"
#include "daemon/scheduling/probe_run.h"
#include "daemon/scheduling/probe_snapshot.h"

namespace iowatch::daemon {

// The probe job's label. Not "job": Prometheus sets that target label on every
// series it scrapes and would rename ours to "exported_job".
constexpr std::string_view kProbe = "probe";

// Names of a run's metrics (probes::ExtractMetrics) that families select, as
// template arguments.
inline constexpr char kIops[] = "iops";
inline constexpr char kLatMean[] = "lat_mean_seconds";

struct ProbeFamilyInput {
  const ProbeSnapshot& recorded;
  const SchedulerStatus& scheduler;
  double now_seconds;
};

struct ProbeFamily {
  std::string_view name;
  std::string_view type;
  std::string_view help;
  void (*write)(const ProbeFamilyInput&, ExpositionWriter&, std::string& out);
  // The daemon's state rather than a run's figure: not in a one-shot push.
  bool daemon_state = false;
};

// The last run's conditions: foreign load, utilisation, pressure, steal,
// CPU wait, contended, load band, judged (probe_condition_families.cc).
void AddConditionFamilies(std::vector<ProbeFamily>& families);
// The last uncontended run's IOPS, mean latency and start, kept through the
// contended runs after it (probe_condition_families.cc).
void AddUncontendedFamilies(std::vector<ProbeFamily>& families);
// Whether the last day's runs were judged, why not, and the last judged run
// (probe_judging_families.cc).
void AddJudgingFamilies(std::vector<ProbeFamily>& families);
// Since when each regression stands, and what its run was judged against and
// under (probe_explain_families.cc).
void AddExplainFamilies(std::vector<ProbeFamily>& families);

}  // namespace iowatch::daemon
