#include "daemon/metrics/probe_metrics_renderer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>

#include "daemon/exposition/exposition.h"
#include "daemon/metrics/probe_families.h"

namespace iowatch::daemon {
namespace {

// One sample per (job, op) of the last run's metric `kMetric`.
template <const char* kMetric>
void LastMetric(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    for (const probes::MetricSample& m : job.last_metrics) {
      if (m.metric == kMetric) w.Sample({{kProbe, job.name}, {"op", m.op}}, m.value);
    }
  }
}

constexpr char kBandwidth[] = "bandwidth_bytes";
constexpr char kClatPrefix[] = "clat_";
constexpr char kLatPrefix[] = "lat_";
constexpr char kSlatMean[] = "slat_mean_seconds";

// The mean and percentiles of one latency (clat or lat) of the last run,
// by the metric names' prefix ("clat_", "lat_").
template <const char* kPrefix>
void LastLatency(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  static const std::array<std::pair<std::string, std::string_view>, 5> kStats = {{
      {std::string(kPrefix) + "mean_seconds", "mean"},
      {std::string(kPrefix) + "p50_seconds", "p50"},
      {std::string(kPrefix) + "p90_seconds", "p90"},
      {std::string(kPrefix) + "p99_seconds", "p99"},
      {std::string(kPrefix) + "p99_9_seconds", "p99_9"},
  }};
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    for (const probes::MetricSample& m : job.last_metrics) {
      for (const auto& [metric, stat] : kStats) {
        if (m.metric == metric) {
          w.Sample({{kProbe, job.name}, {"op", m.op}, {"stat", stat}}, m.value);
        }
      }
    }
  }
}

// Per-job values of the last successful run; a job that has none yet has no sample.
template <double ProbeJobSnapshot::*kField>
void PerJob(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    if (job.last_run_timestamp_seconds > 0) w.Sample({{kProbe, job.name}}, job.*kField);
  }
}

// The family name is the histogram's; its samples carry the _bucket, _sum
// and _count suffixes, so the header is written here rather than by the writer.
void ClatHistogram(const ProbeFamilyInput& in, ExpositionWriter&, std::string& out) {
  bool header = false;
  const auto bounds = ProbeClatBucketBoundsNs();
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    for (const ProbeClatHistogram& h : job.clat) {
      if (!header) {
        out +=
            "# HELP iowatch_probe_clat_seconds Completion latency of every probe I/O since start.\n"
            "# TYPE iowatch_probe_clat_seconds histogram\n";
        header = true;
      }
      ExpositionWriter w(out);
      w.Family("iowatch_probe_clat_seconds_bucket", "histogram", "", true);
      for (size_t i = 0; i < bounds.size() && i < h.cumulative.size(); ++i) {
        const std::string le = fmt::format("{}", static_cast<double>(bounds[i]) / 1e9);
        w.SampleInt({{kProbe, job.name}, {"op", h.op}, {"le", le}}, h.cumulative[i]);
      }
      w.SampleInt({{kProbe, job.name}, {"op", h.op}, {"le", "+Inf"}}, h.count);
      w.Family("iowatch_probe_clat_seconds_sum", "histogram", "", true);
      w.Sample({{kProbe, job.name}, {"op", h.op}}, h.sum_seconds);
      w.Family("iowatch_probe_clat_seconds_count", "histogram", "", true);
      w.SampleInt({{kProbe, job.name}, {"op", h.op}}, h.count);
    }
  }
}

// One sample per (job, op, metric) of the baseline's `kField` (median or spread).
template <double probes::MetricBaseline::*kField>
void BaselineField(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    if (!job.has_baseline) continue;
    for (const probes::MetricBaseline& m : job.baseline) {
      w.Sample({{kProbe, job.name}, {"op", m.op}, {"metric", m.metric}}, m.*kField);
    }
  }
}

void BaselineRatio(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    for (const ProbeVerdict& v : job.verdicts) {
      w.Sample({{kProbe, job.name}, {"op", v.verdict.op}, {"metric", v.verdict.metric}},
               v.verdict.ratio);
    }
  }
}

void Regression(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    for (const ProbeVerdict& v : job.verdicts) {
      w.SampleInt({{kProbe, job.name}, {"op", v.verdict.op}, {"metric", v.verdict.metric}},
                  v.regressed ? 1 : 0);
    }
  }
}

void DriftRatio(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    for (const ProbeVerdict& v : job.verdicts) {
      if (!v.drift_ratio) continue;
      w.Sample({{kProbe, job.name}, {"op", v.verdict.op}, {"metric", v.verdict.metric}},
               *v.drift_ratio);
    }
  }
}

void BaselineAge(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    if (job.has_baseline) {
      w.Sample({{kProbe, job.name}}, std::max(0.0, in.now_seconds - job.baseline_created_seconds));
    }
  }
}

void BaselineRuns(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    if (job.has_baseline) {
      w.SampleInt({{kProbe, job.name}},
                  static_cast<uint64_t>(std::max<int64_t>(0, job.baseline_runs)));
    }
  }
}

void EngineFallbacks(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    for (const std::string& fallback : job.fallbacks) {
      w.SampleInt({{kProbe, job.name}, {"fallback", fallback}}, 1);
    }
  }
}

// The join key to iowatch_disk_info (docs/metrics.md): major and minor.
void TargetInfo(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    if (job.last_run_timestamp_seconds <= 0) continue;
    const std::string major = std::to_string(job.target_major);
    const std::string minor = std::to_string(job.target_minor);
    w.SampleInt({{kProbe, job.name}, {"major", major}, {"minor", minor}}, 1);
  }
}

// The fleet rules' peer key (deploy/prometheus/fleet.rules.yml): the
// workload the last successful run measured, wherever it probed.
void JobInfo(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const ProbeJobSnapshot& job : in.recorded.jobs) {
    if (job.last_run_timestamp_seconds <= 0 || job.workload.empty()) continue;
    w.SampleInt({{kProbe, job.name}, {"fingerprint", job.workload}}, 1);
  }
}

void Interval(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const JobStatus& job : in.scheduler.jobs)
    w.Sample({{kProbe, job.name}}, job.interval_seconds);
}

void Running(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  for (const DeviceStatus& device : in.scheduler.devices) {
    const std::string name = FormatDevice(device.device);
    w.SampleInt({{"device", name}}, device.probe_running ? 1 : 0);
  }
}

void StoreUp(const ProbeFamilyInput& in, ExpositionWriter& w, std::string&) {
  w.SampleInt({}, in.recorded.store_up ? 1 : 0);
}
// The baseline a job's last run was judged against, and the verdicts.
void AddBaselineFamilies(std::vector<ProbeFamily>& f) {
  f.insert(
      f.end(),
      {
          {"iowatch_probe_baseline_value", "gauge",
           "The job's baseline (median of its first runs) per op and metric, in the metric's unit.",
           BaselineField<&probes::MetricBaseline::median>},
          {"iowatch_probe_baseline_spread", "gauge",
           "The baseline's robust spread (1.4826 x MAD of its runs), in the metric's unit.",
           BaselineField<&probes::MetricBaseline::spread>},
          {"iowatch_probe_baseline_ratio", "gauge",
           "The last successful run's value divided by the baseline.", BaselineRatio},
          {"iowatch_probe_regression", "gauge",
           "1 while the metric is regressed: against the baseline (after hysteresis), or by "
           "the evidence of many runs against the series' first day (drift).",
           Regression},
          {"iowatch_probe_drift_ratio", "gauge",
           "The metric's value divided by its reference of the series' first day (the load "
           "model of that day at each run's stress), smoothed over about half a day of runs: "
           "0.95 is 5 % fewer IOPS or a 5 % shorter mean.",
           DriftRatio},
          {"iowatch_probe_baseline_age_seconds", "gauge", "Time since the job's baseline was made.",
           BaselineAge},
          {"iowatch_probe_baseline_runs", "gauge", "Runs the job's baseline was built from.",
           BaselineRuns},
      });
}

std::vector<ProbeFamily> Sorted() {
  std::vector<ProbeFamily> f = {
      {"iowatch_probe_iops", "gauge", "I/O operations per second of the last successful run.",
       LastMetric<kIops>},
      {"iowatch_probe_bandwidth_bytes_per_second", "gauge",
       "Bytes per second of the last successful run.", LastMetric<kBandwidth>},
      {"iowatch_probe_last_clat_seconds", "gauge",
       "Completion latency of the last successful run: mean and percentiles.",
       LastLatency<kClatPrefix>},
      {"iowatch_probe_last_lat_seconds", "gauge",
       "Total latency (submission + completion) of the last successful run: mean and "
       "percentiles, the figures regressions are judged on.",
       LastLatency<kLatPrefix>},
      {"iowatch_probe_lat_mean_seconds", "gauge",
       "Mean total latency (submission + completion) of the last successful run.",
       LastMetric<kLatMean>},
      {"iowatch_probe_slat_mean_seconds", "gauge",
       "Mean submission latency of the last successful run (async engines only).",
       LastMetric<kSlatMean>},
      {"iowatch_probe_last_run_timestamp_seconds", "gauge",
       "Start of the job's last successful run, seconds since the epoch.",
       PerJob<&ProbeJobSnapshot::last_run_timestamp_seconds>},
      {"iowatch_probe_run_duration_seconds", "gauge",
       "Measured time of the job's last successful run.",
       PerJob<&ProbeJobSnapshot::run_duration_seconds>},
      {"iowatch_probe_cpu_seconds", "gauge",
       "User and system CPU time of the job's last successful run.",
       PerJob<&ProbeJobSnapshot::cpu_seconds>},
      {"iowatch_probe_clat_seconds", "histogram", "", ClatHistogram},
      {"iowatch_probe_engine_fallback", "gauge",
       "1 for each thing the engine gave up in the job's last successful run (fixedbufs, "
       "registerfiles, submit_all); none when it ran as asked.",
       EngineFallbacks},
      {"iowatch_probe_interval_seconds", "gauge", "The job's configured interval (every).",
       Interval, true},
      {"iowatch_probe_running", "gauge", "1 while a probe runs on the device.", Running, true},
      {"iowatch_probe_target_info", "gauge",
       "The whole disk the job's last successful run measured (always 1); join with "
       "iowatch_disk_info on major and minor.",
       TargetInfo},
      {"iowatch_probe_job_info", "gauge",
       "The workload the job's last successful run measured (always 1): fingerprint hashes "
       "every job option but its name and path; hosts sharing it are peers.",
       JobInfo},
      {"iowatch_probe_store_up", "gauge", "1 when the last write to the probe store succeeded.",
       StoreUp, true},
  };
  AddConditionFamilies(f);
  AddUncontendedFamilies(f);
  AddJudgingFamilies(f);
  AddExplainFamilies(f);
  AddBaselineFamilies(f);
  std::sort(f.begin(), f.end(),
            [](const ProbeFamily& a, const ProbeFamily& b) { return a.name < b.name; });
  return f;
}

const std::vector<ProbeFamily>& ProbeFamilies() {
  static const std::vector<ProbeFamily> families = Sorted();
  return families;
}

}  // namespace

void RenderProbeMetrics(const ProbeSnapshot& recorded, const SchedulerStatus& scheduler,
                        double now_seconds, std::string& out) {
  const ProbeFamilyInput in{recorded, scheduler, now_seconds};
  for (const ProbeFamily& f : ProbeFamilies()) {
    ExpositionWriter w(out);
    w.Family(f.name, f.type, f.help);
    f.write(in, w, out);
  }
}

void RenderProbeRunMetrics(const ProbeSnapshot& runs, double now_seconds, std::string& out) {
  const SchedulerStatus none;
  const ProbeFamilyInput in{runs, none, now_seconds};
  for (const ProbeFamily& f : ProbeFamilies()) {
    if (f.daemon_state) continue;
    ExpositionWriter w(out);
    w.Family(f.name, f.type, f.help);
    f.write(in, w, out);
  }
}

std::vector<std::string_view> ProbeMetricFamilyNames() {
  std::vector<std::string_view> names;
  for (const ProbeFamily& f : ProbeFamilies()) names.push_back(f.name);
  return names;
}

}  // namespace iowatch::daemon
