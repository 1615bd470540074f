// The probe families of the last run's conditions: what else the disk and
// the host did while it measured, and how the run was classified; and the
// figures of the last run that was not contended.
#include <optional>

#include "daemon/metrics/probe_families.h"
#include "probes/verdicts/run_class.h"

namespace iowatch::daemon {
namespace {

// One figure of the last successful run's conditions; none when they were
// not measured (or the figure was not: no PSI).
template <std::optional<double> (*kFigure)(const probes::RunConditions&)>
void LastCondition(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    if (!job.last_conditions) continue;
    if (const auto value = kFigure(*job.last_conditions)) w.Sample({{kProbe, job.name}}, *value);
  }
}

void LastPressure(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    if (!job.last_conditions) continue;
    const probes::RunConditions& c = *job.last_conditions;
    for (const auto& [kind, value] :
         {std::pair{"some", c.io_pressure_some}, std::pair{"full", c.io_pressure_full}}) {
      if (value) w.Sample({{kProbe, job.name}, {"kind", kind}}, *value);
    }
  }
}

std::optional<double> ForeignIops(const probes::RunConditions& c) { return c.ForeignIops(); }
std::optional<double> ForeignBytes(const probes::RunConditions& c) {
  return c.ForeignBytesPerSecond();
}
std::optional<double> ForeignShare(const probes::RunConditions& c) { return c.ForeignShare(); }
std::optional<double> BeforeIops(const probes::RunConditions& c) {
  return c.before ? std::optional(c.before->Iops()) : std::nullopt;
}
std::optional<double> BeforeBytes(const probes::RunConditions& c) {
  return c.before ? std::optional(c.before->BytesPerSecond()) : std::nullopt;
}
std::optional<double> ForeignLoad(const probes::RunConditions& c) { return probes::ForeignLoad(c); }
std::optional<double> Utilisation(const probes::RunConditions& c) { return c.Utilisation(); }
std::optional<double> Steal(const probes::RunConditions& c) { return c.cpu_steal; }
std::optional<double> OtherProbe(const probes::RunConditions& c) { return c.other_probe ? 1 : 0; }
std::optional<double> CpuWait(const probes::RunConditions& c) { return c.cpu_wait; }

// Per job with a completed run: 1 when it was contended (others' I/O above
// the contention level, or a wait for the CPU), else 0; and its load band.
void Contended(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    if (job.last_class.run_class == probes::RunClass::kUnknown) continue;
    w.Sample({{kProbe, job.name}},
             job.last_class.run_class == probes::RunClass::kContended ? 1.0 : 0.0);
  }
}
void LoadBand(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    if (job.last_class.run_class == probes::RunClass::kUnknown) continue;
    w.Sample({{kProbe, job.name}}, job.last_class.band);
  }
}
// The last uncontended run's figure `kMetric` per (job, op), and its start:
// kept across contended runs (ProbeJobSnapshot::uncontended_metrics), so a
// disk that is seldom quiet still has a figure to set beside its peers'.
template <const char* kMetric>
void UncontendedMetric(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    for (const probes::MetricSample& m : job.uncontended_metrics) {
      if (m.metric == kMetric) w.Sample({{kProbe, job.name}, {"op", m.op}}, m.value);
    }
  }
}
void UncontendedStart(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    if (job.uncontended_run_timestamp_seconds > 0) {
      w.Sample({{kProbe, job.name}}, job.uncontended_run_timestamp_seconds);
    }
  }
}
void Judged(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    if (job.last_run_timestamp_seconds > 0) w.Sample({{kProbe, job.name}}, job.last_judged ? 1 : 0);
  }
}

}  // namespace

void AddConditionFamilies(std::vector<ProbeFamily>& f) {
  f.insert(
      f.end(),
      {
          {"iowatch_probe_foreign_iops", "gauge",
           "Requests per second the probe's disk completed for others during the job's last "
           "successful run.",
           LastCondition<ForeignIops>},
          {"iowatch_probe_foreign_bytes_per_second", "gauge",
           "Bytes per second the probe's disk moved for others during the last successful run.",
           LastCondition<ForeignBytes>},
          {"iowatch_probe_foreign_share_ratio", "gauge",
           "Others' share of the disk's work (requests weighted 1 + bytes / 64 KiB) during the "
           "last successful run (0-1).",
           LastCondition<ForeignShare>},
          {"iowatch_probe_before_iops", "gauge",
           "Requests per second the probe's disk completed in the window just before the job's "
           "last successful run (probes.baseline.contention.before), the probe not yet there.",
           LastCondition<BeforeIops>},
          {"iowatch_probe_before_bytes_per_second", "gauge",
           "Bytes per second the probe's disk moved in the window just before the last "
           "successful run.",
           LastCondition<BeforeBytes>},
          {"iowatch_probe_foreign_load", "gauge",
           "Others' requests per second weighted 1 + bytes / 64 KiB, the larger of during and "
           "just before the last successful run: what its load band comes from.",
           LastCondition<ForeignLoad>},
          {"iowatch_probe_device_utilization_ratio", "gauge",
           "The disk's busy share (%util / 100) during the last successful run.",
           LastCondition<Utilisation>},
          {"iowatch_probe_io_pressure_ratio", "gauge",
           "Share of the last successful run during which some (full: all) tasks stalled on "
           "I/O, /proc/pressure/io.",
           LastPressure},
          {"iowatch_probe_cpu_steal_ratio", "gauge",
           "Share of CPU time the hypervisor took during the last successful run.",
           LastCondition<Steal>},
          {"iowatch_probe_overlapped", "gauge",
           "1 when another probe run measured during the job's last successful run.",
           LastCondition<OtherProbe>},
          {"iowatch_probe_cpu_wait_ratio", "gauge",
           "Share of the last successful run the probe's thread waited for a CPU "
           "(schedstat run_delay).",
           LastCondition<CpuWait>},
          {"iowatch_probe_contended", "gauge",
           "1 when the job's last successful run was contended (others' I/O above the "
           "contention level, or a long wait for a CPU): judged only against runs of its load "
           "band.",
           Contended},
          {"iowatch_probe_load_band", "gauge",
           "The foreign-load band of the job's last successful run: 0 clean, n >= 1 others' "
           "weighted requests/s in [32 x 2^(n-1), 32 x 2^n) (band 1 from 0), -1 a wait for "
           "the CPU.",
           LoadBand},
          {"iowatch_probe_judged", "gauge",
           "1 when the job's last successful run was judged against a baseline; 0 when not "
           "(conditions unknown, no baseline for its band yet, a wait for the CPU, too few "
           "I/Os).",
           Judged},
      });
}

// The last uncontended run's figures and start: the fleet rules' peer input.
void AddUncontendedFamilies(std::vector<ProbeFamily>& f) {
  f.insert(
      f.end(),
      {
          {"iowatch_probe_uncontended_iops", "gauge",
           "I/O operations per second of the job's last uncontended run (iowatch_probe_contended "
           "0), kept until the next one: the fleet rules' peer input.",
           UncontendedMetric<kIops>},
          {"iowatch_probe_uncontended_lat_mean_seconds", "gauge",
           "Mean total latency of the job's last uncontended run, kept until the next one.",
           UncontendedMetric<kLatMean>},
          {"iowatch_probe_uncontended_run_timestamp_seconds", "gauge",
           "Start of the job's last uncontended run, seconds since the epoch.", UncontendedStart},
      });
}

}  // namespace iowatch::daemon
