// The probe families that let a regression explain itself (the alert
// IowatchProbeRegression quotes them): since when each standing regression
// stands, and what the last judged run was judged against and under: when
// its baseline's runs ran and the drift watch's first day, the load and CPU
// steal of those runs (their medians) beside the judged run's own.
#include <optional>

#include "daemon/metrics/probe_families.h"

namespace iowatch::daemon {
namespace {

double Seconds(int64_t unix_ms) { return static_cast<double>(unix_ms) / 1000; }

void RegressionSince(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    for (const ProbeVerdict& v : job.verdicts) {
      w.Sample({{kProbe, job.name}, {"op", v.verdict.op}, {"metric", v.verdict.metric}},
               v.regressed ? Seconds(v.since_ms) : 0);
    }
  }
}

// One figure of a job's runs summary (`kRuns`: the baseline's or the
// reference's); none when the summary or the figure is not known.
template <std::optional<probes::RunsSummary> ProbeJobSnapshot::*kRuns,
          std::optional<double> (*kFigure)(const probes::RunsSummary&)>
void RunsFigure(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    if (job.verdicts.empty() || !(job.*kRuns)) continue;
    if (const std::optional<double> value = kFigure(*(job.*kRuns))) {
      w.Sample({{kProbe, job.name}}, *value);
    }
  }
}
std::optional<double> FirstStart(const probes::RunsSummary& s) { return Seconds(s.first_start_ms); }
std::optional<double> LastStart(const probes::RunsSummary& s) { return Seconds(s.last_start_ms); }
std::optional<double> MedianLoad(const probes::RunsSummary& s) { return s.foreign_load; }
std::optional<double> MedianSteal(const probes::RunsSummary& s) { return s.cpu_steal; }

template <double probes::RunLoad::*kField>
void JudgedRunLoad(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    if (!job.verdicts.empty() && job.judged_load) {
      w.Sample({{kProbe, job.name}}, (*job.judged_load).*kField);
    }
  }
}

constexpr auto kBaselineRuns = &ProbeJobSnapshot::judged_baseline_runs;
constexpr auto kReferenceRuns = &ProbeJobSnapshot::reference_runs;

}  // namespace

void AddExplainFamilies(std::vector<ProbeFamily>& f) {
  f.insert(
      f.end(),
      {
          {"iowatch_probe_regression_since_timestamp_seconds", "gauge",
           "While the metric is regressed, the start of its first bad run (of the streak that "
           "raised it, or of a drift's evidence), seconds since the epoch; 0 otherwise.",
           RegressionSince},
          {"iowatch_probe_baseline_first_run_timestamp_seconds", "gauge",
           "Start of the first run the baseline (or prediction) of the last judged run was made "
           "of; none for an imported baseline.",
           RunsFigure<kBaselineRuns, FirstStart>},
          {"iowatch_probe_baseline_last_run_timestamp_seconds", "gauge",
           "Start of the last run that baseline was made of.",
           RunsFigure<kBaselineRuns, LastStart>},
          {"iowatch_probe_baseline_foreign_load", "gauge",
           "Median foreign load (others' requests/s weighted 1 + bytes / 64 KiB) of the runs "
           "that baseline was made of.",
           RunsFigure<kBaselineRuns, MedianLoad>},
          {"iowatch_probe_baseline_cpu_steal_ratio", "gauge",
           "Median share of CPU time the hypervisor took during the runs that baseline was "
           "made of.",
           RunsFigure<kBaselineRuns, MedianSteal>},
          {"iowatch_probe_drift_reference_first_run_timestamp_seconds", "gauge",
           "Start of the first run of the drift watch's reference (the series' first day, its "
           "commissioning); none before it is chosen.",
           RunsFigure<kReferenceRuns, FirstStart>},
          {"iowatch_probe_drift_reference_last_run_timestamp_seconds", "gauge",
           "Start of the last run of the drift watch's reference.",
           RunsFigure<kReferenceRuns, LastStart>},
          {"iowatch_probe_judged_run_foreign_load", "gauge",
           "Foreign load (weighted requests/s) of the last judged run, the one "
           "iowatch_probe_baseline_ratio is of.",
           JudgedRunLoad<&probes::RunLoad::foreign_load>},
          {"iowatch_probe_judged_run_cpu_steal_ratio", "gauge",
           "Share of CPU time the hypervisor took during the last judged run.",
           JudgedRunLoad<&probes::RunLoad::cpu_steal>},
      });
}

}  // namespace iowatch::daemon
