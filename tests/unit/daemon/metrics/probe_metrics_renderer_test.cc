// The probe families for a small hand-made ProbeSnapshot, as exact text, and
// the shape of the cumulative histogram.
#include "daemon/metrics/probe_metrics_renderer.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "probes/stats/latency_histogram.h"

namespace iowatch::daemon {
namespace {

ProbeSnapshot Small() {
  ProbeSnapshot s;
  s.store_up = true;
  s.store_errors_total = 2;
  ProbeJobSnapshot job;
  job.name = "rr";
  job.last_metrics = {{"read", "iops", 1000},
                      {"read", "bandwidth_bytes", 4096000},
                      {"read", "clat_mean_seconds", 0.0001},
                      {"read", "clat_p50_seconds", 0.0001},
                      {"read", "clat_p90_seconds", 0.0002},
                      {"read", "clat_p99_seconds", 0.0005},
                      {"read", "clat_p99_9_seconds", 0.001},
                      {"read", "lat_mean_seconds", 0.00011}};
  job.last_run_timestamp_seconds = 1700000000;
  job.run_duration_seconds = 1;
  job.cpu_seconds = 0.25;
  job.target_major = 8;
  job.target_minor = 0;
  job.workload = "0123456789abcdef";
  ProbeClatHistogram h;
  h.op = "read";
  h.cumulative.assign(ProbeClatBucketBoundsNs().size(), 3);
  h.cumulative[0] = 0;
  h.cumulative[1] = 0;
  h.cumulative[2] = 1;
  h.count = 3;
  h.sum_seconds = 0.5;
  job.clat = {h};
  job.has_baseline = true;
  job.baseline = {{"read", "iops", 1250, 10}};
  job.baseline_created_seconds = 1699999000;
  job.baseline_runs = 5;
  job.verdicts = {
      {{"read", "iops", 1000, 1250, 0.8, 250, true, true, ""}, true, 0.93, 1699990000500}};
  // Judged against runs of 2023-11-03 (load 12.5, 1 % stolen), its first day the day before.
  job.judged_baseline_runs = probes::RunsSummary{5, 1699000000000, 1699003600000, 5, 12.5, 0.01};
  job.reference_runs = probes::RunsSummary{96, 1698900000000, 1698986400000, 96, 3, 0.005};
  job.judged_load = probes::RunLoad{850, 0.03};
  job.last_judged = true;
  // The last uncontended run, an earlier one than the last run.
  job.uncontended_metrics = {{"read", "iops", 1200},
                             {"read", "clat_mean_seconds", 0.00008},
                             {"read", "lat_mean_seconds", 0.00009}};
  job.uncontended_run_timestamp_seconds = 1699999100;
  s.jobs = {job};
  return s;
}

SchedulerStatus Status() {
  SchedulerStatus status;
  JobStatus job;
  job.name = "rr";
  job.interval_seconds = 900;
  job.runs = {7, 1, 2, 0};
  status.jobs = {job};
  status.devices = {{MakeDeviceId(8, 0), true, "rr"}};
  return status;
}

TEST(ProbeMetricsRenderer, SmallSnapshotAsExactText) {
  std::string out;
  RenderProbeMetrics(Small(), Status(), 1700000000, out);
  const std::string expected =
      R"(# HELP iowatch_probe_bandwidth_bytes_per_second Bytes per second of the last successful run.
# TYPE iowatch_probe_bandwidth_bytes_per_second gauge
iowatch_probe_bandwidth_bytes_per_second{probe="rr",op="read"} 4096000
# HELP iowatch_probe_baseline_age_seconds Time since the job's baseline was made.
# TYPE iowatch_probe_baseline_age_seconds gauge
iowatch_probe_baseline_age_seconds{probe="rr"} 1000
# HELP iowatch_probe_baseline_cpu_steal_ratio Median share of CPU time the hypervisor took during the runs that baseline was made of.
# TYPE iowatch_probe_baseline_cpu_steal_ratio gauge
iowatch_probe_baseline_cpu_steal_ratio{probe="rr"} 0.01
# HELP iowatch_probe_baseline_first_run_timestamp_seconds Start of the first run the baseline (or prediction) of the last judged run was made of; none for an imported baseline.
# TYPE iowatch_probe_baseline_first_run_timestamp_seconds gauge
iowatch_probe_baseline_first_run_timestamp_seconds{probe="rr"} 1699000000
# HELP iowatch_probe_baseline_foreign_load Median foreign load (others' requests/s weighted 1 + bytes / 64 KiB) of the runs that baseline was made of.
# TYPE iowatch_probe_baseline_foreign_load gauge
iowatch_probe_baseline_foreign_load{probe="rr"} 12.5
# HELP iowatch_probe_baseline_last_run_timestamp_seconds Start of the last run that baseline was made of.
# TYPE iowatch_probe_baseline_last_run_timestamp_seconds gauge
iowatch_probe_baseline_last_run_timestamp_seconds{probe="rr"} 1699003600
# HELP iowatch_probe_baseline_ratio The last successful run's value divided by the baseline.
# TYPE iowatch_probe_baseline_ratio gauge
iowatch_probe_baseline_ratio{probe="rr",op="read",metric="iops"} 0.8
# HELP iowatch_probe_baseline_runs Runs the job's baseline was built from.
# TYPE iowatch_probe_baseline_runs gauge
iowatch_probe_baseline_runs{probe="rr"} 5
# HELP iowatch_probe_baseline_spread The baseline's robust spread (1.4826 x MAD of its runs), in the metric's unit.
# TYPE iowatch_probe_baseline_spread gauge
iowatch_probe_baseline_spread{probe="rr",op="read",metric="iops"} 10
# HELP iowatch_probe_baseline_value The job's baseline (median of its first runs) per op and metric, in the metric's unit.
# TYPE iowatch_probe_baseline_value gauge
iowatch_probe_baseline_value{probe="rr",op="read",metric="iops"} 1250
# HELP iowatch_probe_clat_seconds Completion latency of every probe I/O since start.
# TYPE iowatch_probe_clat_seconds histogram
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="1e-05"} 0
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="2.5e-05"} 0
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="5e-05"} 1
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="0.0001"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="0.00025"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="0.0005"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="0.001"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="0.0025"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="0.005"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="0.01"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="0.025"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="0.05"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="0.1"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="0.25"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="0.5"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="1"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="2.5"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="5"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="10"} 3
iowatch_probe_clat_seconds_bucket{probe="rr",op="read",le="+Inf"} 3
iowatch_probe_clat_seconds_sum{probe="rr",op="read"} 0.5
iowatch_probe_clat_seconds_count{probe="rr",op="read"} 3
# HELP iowatch_probe_cpu_seconds User and system CPU time of the job's last successful run.
# TYPE iowatch_probe_cpu_seconds gauge
iowatch_probe_cpu_seconds{probe="rr"} 0.25
# HELP iowatch_probe_drift_ratio The metric's value divided by its reference of the series' first day (the load model of that day at each run's stress), smoothed over about half a day of runs: 0.95 is 5 % fewer IOPS or a 5 % shorter mean.
# TYPE iowatch_probe_drift_ratio gauge
iowatch_probe_drift_ratio{probe="rr",op="read",metric="iops"} 0.93
# HELP iowatch_probe_drift_reference_first_run_timestamp_seconds Start of the first run of the drift watch's reference (the series' first day, its commissioning); none before it is chosen.
# TYPE iowatch_probe_drift_reference_first_run_timestamp_seconds gauge
iowatch_probe_drift_reference_first_run_timestamp_seconds{probe="rr"} 1698900000
# HELP iowatch_probe_drift_reference_last_run_timestamp_seconds Start of the last run of the drift watch's reference.
# TYPE iowatch_probe_drift_reference_last_run_timestamp_seconds gauge
iowatch_probe_drift_reference_last_run_timestamp_seconds{probe="rr"} 1698986400
# HELP iowatch_probe_interval_seconds The job's configured interval (every).
# TYPE iowatch_probe_interval_seconds gauge
iowatch_probe_interval_seconds{probe="rr"} 900
# HELP iowatch_probe_iops I/O operations per second of the last successful run.
# TYPE iowatch_probe_iops gauge
iowatch_probe_iops{probe="rr",op="read"} 1000
# HELP iowatch_probe_job_info The workload the job's last successful run measured (always 1): fingerprint hashes every job option but its name and path; hosts sharing it are peers.
# TYPE iowatch_probe_job_info gauge
iowatch_probe_job_info{probe="rr",fingerprint="0123456789abcdef"} 1
# HELP iowatch_probe_judged 1 when the job's last successful run was judged against a baseline; 0 when not (conditions unknown, no baseline for its band yet, a wait for the CPU, too few I/Os).
# TYPE iowatch_probe_judged gauge
iowatch_probe_judged{probe="rr"} 1
# HELP iowatch_probe_judged_run_cpu_steal_ratio Share of CPU time the hypervisor took during the last judged run.
# TYPE iowatch_probe_judged_run_cpu_steal_ratio gauge
iowatch_probe_judged_run_cpu_steal_ratio{probe="rr"} 0.03
# HELP iowatch_probe_judged_run_foreign_load Foreign load (weighted requests/s) of the last judged run, the one iowatch_probe_baseline_ratio is of.
# TYPE iowatch_probe_judged_run_foreign_load gauge
iowatch_probe_judged_run_foreign_load{probe="rr"} 850
# HELP iowatch_probe_last_clat_seconds Completion latency of the last successful run: mean and percentiles.
# TYPE iowatch_probe_last_clat_seconds gauge
iowatch_probe_last_clat_seconds{probe="rr",op="read",stat="mean"} 0.0001
iowatch_probe_last_clat_seconds{probe="rr",op="read",stat="p50"} 0.0001
iowatch_probe_last_clat_seconds{probe="rr",op="read",stat="p90"} 0.0002
iowatch_probe_last_clat_seconds{probe="rr",op="read",stat="p99"} 0.0005
iowatch_probe_last_clat_seconds{probe="rr",op="read",stat="p99_9"} 0.001
# HELP iowatch_probe_last_lat_seconds Total latency (submission + completion) of the last successful run: mean and percentiles, the figures regressions are judged on.
# TYPE iowatch_probe_last_lat_seconds gauge
iowatch_probe_last_lat_seconds{probe="rr",op="read",stat="mean"} 0.00011
# HELP iowatch_probe_last_run_timestamp_seconds Start of the job's last successful run, seconds since the epoch.
# TYPE iowatch_probe_last_run_timestamp_seconds gauge
iowatch_probe_last_run_timestamp_seconds{probe="rr"} 1700000000
# HELP iowatch_probe_lat_mean_seconds Mean total latency (submission + completion) of the last successful run.
# TYPE iowatch_probe_lat_mean_seconds gauge
iowatch_probe_lat_mean_seconds{probe="rr",op="read"} 0.00011
# HELP iowatch_probe_regression 1 while the metric is regressed: against the baseline (after hysteresis), or by the evidence of many runs against the series' first day (drift).
# TYPE iowatch_probe_regression gauge
iowatch_probe_regression{probe="rr",op="read",metric="iops"} 1
# HELP iowatch_probe_regression_since_timestamp_seconds While the metric is regressed, the start of its first bad run (of the streak that raised it, or of a drift's evidence), seconds since the epoch; 0 otherwise.
# TYPE iowatch_probe_regression_since_timestamp_seconds gauge
iowatch_probe_regression_since_timestamp_seconds{probe="rr",op="read",metric="iops"} 1699990000.5
# HELP iowatch_probe_run_duration_seconds Measured time of the job's last successful run.
# TYPE iowatch_probe_run_duration_seconds gauge
iowatch_probe_run_duration_seconds{probe="rr"} 1
# HELP iowatch_probe_running 1 while a probe runs on the device.
# TYPE iowatch_probe_running gauge
iowatch_probe_running{device="8:0"} 1
# HELP iowatch_probe_store_up 1 when the last write to the probe store succeeded.
# TYPE iowatch_probe_store_up gauge
iowatch_probe_store_up 1
# HELP iowatch_probe_target_info The whole disk the job's last successful run measured (always 1); join with iowatch_disk_info on major and minor.
# TYPE iowatch_probe_target_info gauge
iowatch_probe_target_info{probe="rr",major="8",minor="0"} 1
# HELP iowatch_probe_uncontended_iops I/O operations per second of the job's last uncontended run (iowatch_probe_contended 0), kept until the next one: the fleet rules' peer input.
# TYPE iowatch_probe_uncontended_iops gauge
iowatch_probe_uncontended_iops{probe="rr",op="read"} 1200
# HELP iowatch_probe_uncontended_lat_mean_seconds Mean total latency of the job's last uncontended run, kept until the next one.
# TYPE iowatch_probe_uncontended_lat_mean_seconds gauge
iowatch_probe_uncontended_lat_mean_seconds{probe="rr",op="read"} 9e-05
# HELP iowatch_probe_uncontended_run_timestamp_seconds Start of the job's last uncontended run, seconds since the epoch.
# TYPE iowatch_probe_uncontended_run_timestamp_seconds gauge
iowatch_probe_uncontended_run_timestamp_seconds{probe="rr"} 1699999100
)";
  EXPECT_EQ(out, expected);
}

TEST(ProbeMetricsRenderer, FamiliesAreSortedByName) {
  const auto names = ProbeMetricFamilyNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(names.size(), 52u);  // runs, skips and store errors: ProbeCounters (prometheus-cpp)
}

// Silence made visible: the share of the last day's runs judged, the runs
// not judged by reason (every reason, 0 when none) and the last judged run;
// a job with no run in the day has no ratio, one never judged no timestamp.
TEST(ProbeMetricsRenderer, TheShareOfRunsJudgedWhyNotAndTheLastJudgedRun) {
  ProbeSnapshot s = Small();
  s.jobs[0].judging = {10,
                       4,
                       {{"unknown_conditions", 0},
                        {"cpu_contended", 5},
                        {"bands_off", 0},
                        {"learning", 1},
                        {"regression_standing", 0},
                        {"no_metric", 0}},
                       1'699'990'000'500};
  ProbeJobSnapshot idle;
  idle.name = "idle";
  s.jobs.push_back(idle);
  std::string out;
  RenderProbeMetrics(s, Status(), 1700000100, out);
  for (const char* line : {
           "iowatch_probe_judged_ratio{probe=\"rr\"} 0.4\n",
           "iowatch_probe_not_judged_runs{probe=\"rr\",reason=\"cpu_contended\"} 5\n",
           "iowatch_probe_not_judged_runs{probe=\"rr\",reason=\"learning\"} 1\n",
           "iowatch_probe_not_judged_runs{probe=\"rr\",reason=\"no_metric\"} 0\n",
           "iowatch_probe_last_judged_timestamp_seconds{probe=\"rr\"} 1699990000.5\n",
       }) {
    EXPECT_NE(out.find(line), std::string::npos) << line << out;
  }
  EXPECT_EQ(out.find("iowatch_probe_judged_ratio{probe=\"idle\"}"), std::string::npos);
  EXPECT_EQ(out.find("iowatch_probe_last_judged_timestamp_seconds{probe=\"idle\"}"),
            std::string::npos);
  // Not a run's figure: a one-shot push leaves them out.
  std::string pushed;
  RenderProbeRunMetrics(s, 1700000100, pushed);
  EXPECT_EQ(pushed.find("iowatch_probe_judged_ratio"), std::string::npos);
}

// One series per fallback of the last successful run, none without: a
// dashboard can tell a run that measured something else than asked.
// A metric not regressed says 0 for since; a baseline imported (no runs
// here) and a reference not chosen yet have no time range nor load; a job
// whose verdicts went (a reset) explains nothing.
TEST(ProbeMetricsRenderer, WhatIsNotKnownIsNotExplained) {
  ProbeSnapshot s = Small();
  ProbeJobSnapshot& job = s.jobs[0];
  job.verdicts[0].regressed = false;
  job.judged_baseline_runs = probes::RunsSummary{5, 1699000000000, 1699003600000, 0, {}, {}};
  job.reference_runs.reset();
  job.judged_load.reset();
  ProbeJobSnapshot reset = job;
  reset.name = "gone";
  reset.verdicts.clear();
  reset.judged_baseline_runs = probes::RunsSummary{5, 1, 2, 5, 1, 0};
  s.jobs.push_back(reset);
  std::string out;
  RenderProbeMetrics(s, Status(), 1700000000, out);
  EXPECT_NE(out.find("iowatch_probe_regression_since_timestamp_seconds{probe=\"rr\",op=\"read\","
                     "metric=\"iops\"} 0\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("iowatch_probe_baseline_first_run_timestamp_seconds{probe=\"rr\"} "
                     "1699000000\n"),
            std::string::npos)
      << out;
  for (const char* absent :
       {"iowatch_probe_baseline_foreign_load{", "iowatch_probe_baseline_cpu_steal_ratio{",
        "iowatch_probe_drift_reference_first_run_timestamp_seconds{",
        "iowatch_probe_judged_run_foreign_load{",
        "iowatch_probe_regression_since_timestamp_seconds{probe=\"gone\"",
        "iowatch_probe_baseline_first_run_timestamp_seconds{probe=\"gone\"}"}) {
    EXPECT_EQ(out.find(absent), std::string::npos) << absent << "\n" << out;
  }
}

TEST(ProbeMetricsRenderer, EngineFallbacksAreOneSeriesEach) {
  ProbeSnapshot s;
  s.jobs.resize(2);
  s.jobs[0].name = "plain";
  s.jobs[1].name = "rr";
  s.jobs[1].fallbacks = {"fixedbufs", "submit_all"};
  std::string out;
  RenderProbeMetrics(s, SchedulerStatus{}, 0, out);
  EXPECT_NE(out.find("# TYPE iowatch_probe_engine_fallback gauge\n"
                     "iowatch_probe_engine_fallback{probe=\"rr\",fallback=\"fixedbufs\"} 1\n"
                     "iowatch_probe_engine_fallback{probe=\"rr\",fallback=\"submit_all\"} 1\n"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("probe=\"plain\",fallback"), std::string::npos);
  s.jobs[1].fallbacks.clear();
  out.clear();
  RenderProbeMetrics(s, SchedulerStatus{}, 0, out);
  EXPECT_EQ(out.find("iowatch_probe_engine_fallback"), std::string::npos);
}

// The last successful run's conditions, one gauge each; pressure per kind
// where PSI exists; nothing for a job whose conditions were not measured.
TEST(ProbeMetricsRenderer, TheLastRunsConditions) {
  ProbeSnapshot s;
  s.jobs.resize(2);
  s.jobs[0].name = "measured";
  s.jobs[1].name = "unknown";
  probes::RunConditions c;
  c.seconds = 2;
  // Others: 3,000 requests of 4 KiB beside the probe's 1,000, so 3/4 of
  // the work.
  c.device_ios = 4000;
  c.own_requests = 1000;
  c.device_bytes = 16'384'000;
  c.own_bytes = 4'096'000;
  c.device_io_seconds = 2;
  c.own_io_seconds = 0.5;
  c.device_busy_seconds = 1;
  c.io_pressure_some = 0.25;
  c.cpu_steal = 0.01;
  c.other_probe = true;
  c.cpu_wait = 0.125;
  // In the second before the run: 4,000 requests of 64 KiB, 8,000 weighted.
  c.before = probes::LoadWindow{1, 4000, 4000 * 65536, 0.9};
  s.jobs[0].last_conditions = c;
  s.jobs[0].last_class = probes::Classify(c, {});
  std::string out;
  RenderProbeMetrics(s, SchedulerStatus{}, 0, out);
  for (const char* line :
       {"iowatch_probe_foreign_iops{probe=\"measured\"} 1500\n",
        "iowatch_probe_foreign_bytes_per_second{probe=\"measured\"} 6144000\n",
        "iowatch_probe_foreign_share_ratio{probe=\"measured\"} 0.75\n",
        "iowatch_probe_device_utilization_ratio{probe=\"measured\"} 0.5\n",
        "iowatch_probe_io_pressure_ratio{probe=\"measured\",kind=\"some\"} 0.25\n",
        "iowatch_probe_cpu_steal_ratio{probe=\"measured\"} 0.01\n",
        "iowatch_probe_overlapped{probe=\"measured\"} 1\n",
        "iowatch_probe_cpu_wait_ratio{probe=\"measured\"} 0.125\n",
        "iowatch_probe_contended{probe=\"measured\"} 1\n",
        "iowatch_probe_before_iops{probe=\"measured\"} 4000\n",
        "iowatch_probe_before_bytes_per_second{probe=\"measured\"} 262144000\n",
        // Before: 8,000 weighted requests/s, more than during the run (1,500 ×
        // (1 + 4096 / 65536) = 1,594): [4096, 8192).
        "iowatch_probe_foreign_load{probe=\"measured\"} 8000\n",
        "iowatch_probe_load_band{probe=\"measured\"} 8\n"}) {
    EXPECT_NE(out.find(line), std::string::npos) << line << out;
  }
  EXPECT_EQ(out.find("kind=\"full\""), std::string::npos) << "no full line was measured";
  EXPECT_EQ(out.find("probe=\"unknown\""), std::string::npos);
}

TEST(ProbeMetricsRenderer, NothingButCountersBeforeTheFirstRun) {
  ProbeSnapshot s;
  s.jobs.push_back({});
  s.jobs[0].name = "rr";
  std::string out;
  RenderProbeMetrics(s, SchedulerStatus{}, 0, out);
  EXPECT_EQ(out.find("iowatch_probe_iops"), std::string::npos);
  EXPECT_EQ(out.find("iowatch_probe_clat_seconds"), std::string::npos);
  EXPECT_NE(out.find("iowatch_probe_store_up 0\n"), std::string::npos);
}

// CountAtOrBelow over the bounds of a real histogram: cumulative, monotone,
// never above the total, and exact where the values are far from a bound.
TEST(ProbeMetricsRenderer, ClatBoundsGiveAMonotoneCumulativeHistogram) {
  probes::LatencyHistogram h;
  for (uint64_t ns : {5'000u, 30'000u, 70'000u, 70'000u, 400'000u, 3'000'000u, 20'000'000u}) {
    h.Record(ns);
  }
  const auto bounds = ProbeClatBucketBoundsNs();
  ASSERT_EQ(bounds.size(), 19u);
  EXPECT_EQ(bounds.front(), 10'000u);
  EXPECT_EQ(bounds.back(), 10'000'000'000u);
  EXPECT_TRUE(std::is_sorted(bounds.begin(), bounds.end()));
  uint64_t previous = 0;
  std::vector<uint64_t> counts;
  for (const uint64_t bound : bounds) {
    const uint64_t count = h.CountAtOrBelow(bound);
    EXPECT_GE(count, previous);
    EXPECT_LE(count, h.Count());
    previous = count;
    counts.push_back(count);
  }
  // le=1e-05: 1, 2.5e-05: 1, 5e-05: 2, 1e-04: 4, 2.5e-4: 4, 5e-4: 5, 1e-3: 5,
  // 2.5e-3: 5, 5e-3: 6, 1e-2: 6, 2.5e-2: 7 ... 10: 7.
  const std::vector<uint64_t> expected = {1, 1, 2, 4, 4, 5, 5, 5, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7};
  EXPECT_EQ(counts, expected);
}

}  // namespace
}  // namespace iowatch::daemon
