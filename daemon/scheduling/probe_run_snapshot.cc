#include "daemon/scheduling/probe_run_snapshot.h"

#include <sys/sysmacros.h>

#include <utility>

#include "common/clock.h"
#include "probes/spec/job_spec.h"
#include "probes/verdicts/run_class.h"
#include "probes/verdicts/run_metrics.h"

namespace iowatch::daemon {

void SetLastRun(ProbeJobSnapshot& job, const probes::ProbeResult& result,
                std::vector<probes::MetricSample> metrics, int64_t start_unix_ms, dev_t device) {
  job.last_metrics = std::move(metrics);
  job.last_run_timestamp_seconds = static_cast<double>(start_unix_ms) / 1000;
  job.run_duration_seconds = ToSeconds(result.elapsed);
  job.cpu_seconds = result.cpu.user_seconds + result.cpu.system_seconds;
  job.target_major = major(device);
  job.target_minor = minor(device);
  job.workload = probes::WorkloadFingerprint(result.spec);
}

void KeepIfUncontended(ProbeJobSnapshot& job) {
  if (job.last_class.run_class != probes::RunClass::kClean) return;
  job.uncontended_metrics = job.last_metrics;
  job.uncontended_run_timestamp_seconds = job.last_run_timestamp_seconds;
}

ProbeClatHistogram Cumulative(const std::string& op, const probes::LatencyHistogram& histogram,
                              double sum_seconds) {
  ProbeClatHistogram out;
  out.op = op;
  for (const uint64_t bound : ProbeClatBucketBoundsNs()) {
    out.cumulative.push_back(histogram.CountAtOrBelow(bound));
  }
  out.count = histogram.Count();
  out.sum_seconds = sum_seconds;
  return out;
}

double ClatSumSeconds(const probes::DirectionStats& direction) {
  return direction.clat.Mean() * static_cast<double>(direction.clat.Count()) / 1e9;
}

ProbeJobSnapshot OneRunSnapshot(const std::string& name, const probes::ProbeResult& result,
                                int64_t start_unix_ms, dev_t device) {
  ProbeJobSnapshot job;
  job.name = name;
  SetLastRun(job, result, probes::ExtractMetrics(result), start_unix_ms, device);
  for (const auto& [op, d] : {std::pair{"read", &result.read}, std::pair{"write", &result.write}}) {
    if (d->clat_histogram.Count() == 0) continue;
    job.clat.push_back(Cumulative(op, d->clat_histogram, ClatSumSeconds(*d)));
  }
  return job;
}

}  // namespace iowatch::daemon
