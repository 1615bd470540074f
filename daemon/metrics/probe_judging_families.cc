// The probe families that make silence visible: the share of a job's runs
// of the last 24 h judged against a baseline, why the others were not, and
// when the last judged run started (JudgedWindow). A disk whose runs are
// never judged has no verdict; these say so, and IowatchProbeNotJudged
// alerts on them.
#include "daemon/metrics/probe_families.h"

namespace iowatch::daemon {
namespace {

void JudgedRatio(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    const probes::JudgedSummary& s = job.judging;
    if (s.runs == 0) continue;
    w.Sample({{kProbe, job.name}}, static_cast<double>(s.judged) / static_cast<double>(s.runs));
  }
}

void NotJudgedRuns(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    for (const auto& [reason, count] : job.judging.not_judged) {
      w.Sample({{kProbe, job.name}, {"reason", reason}}, static_cast<double>(count));
    }
  }
}

void LastJudged(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    const int64_t ms = job.judging.last_judged_unix_ms;
    if (ms > 0) w.Sample({{kProbe, job.name}}, static_cast<double>(ms) / 1000);
  }
}

}  // namespace

void AddJudgingFamilies(std::vector<ProbeFamily>& f) {
  f.insert(f.end(),
           {
               {"iowatch_probe_judged_ratio", "gauge",
                "Share of the job's successful runs of the last 24 h that were judged against a "
                "baseline (0-1); none without a run in that time.",
                JudgedRatio, true},
               {"iowatch_probe_not_judged_runs", "gauge",
                "The job's successful runs of the last 24 h not judged, by reason: "
                "unknown_conditions, cpu_contended, bands_off, learning, regression_standing, "
                "no_metric, outside_model.",
                NotJudgedRuns, true},
               {"iowatch_probe_last_judged_timestamp_seconds", "gauge",
                "Start of the job's last run judged against a baseline, seconds since the "
                "epoch (kept across restarts); none when no run was ever judged.",
                LastJudged, true},
           });
}

}  // namespace iowatch::daemon
