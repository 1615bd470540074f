// The probes section: the bundled jobs, every key, how defaults and jobs
// merge, where a relative target lives, and every error with its position.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>

#include "config/config.h"
#include "tests/unit/config/config_test_util.h"
#include "tests/unit/config/every_probes_key.h"
#include "tests/unit/test_files.h"

namespace iowatch::config {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

using testing::BundledSettings;
using testing::ErrorOf;
using testing::kBundled;
using testing::MessageOf;
using testing::Parsed;

std::vector<std::string> Names(const ProbesConfig& p) {
  std::vector<std::string> names;
  for (const ProbeJobConfig& job : p.jobs) names.push_back(job.name);
  return names;
}

TEST(ProbesConfig, Defaults) {
  const ProbesConfig p;
  EXPECT_TRUE(p.enabled);
  EXPECT_EQ(p.max_concurrent, 1u);
  EXPECT_EQ(p.busy_threshold, 0.5);
  EXPECT_EQ(p.busy_window, minutes(1));
  EXPECT_EQ(p.busy_retry, minutes(1));
  EXPECT_EQ(p.max_skips, 10u);
  EXPECT_EQ(p.retention, std::chrono::days(90));
  EXPECT_EQ(p.baseline, probes::BaselinePolicy{});
  EXPECT_EQ(p.baseline.runs, 10u);
  EXPECT_EQ(p.baseline.hysteresis, 3u);
  EXPECT_EQ(p.baseline.min_bad_span_ms, 45 * 1000);
  EXPECT_EQ(p.baseline.min_age_ms, 3600 * 1000);
  EXPECT_EQ(p.baseline.throughput_spread_floor, 0.05);
  EXPECT_EQ(p.baseline.latency_spread_floor, 0.10);
  EXPECT_EQ(p.baseline.tail_spread_floor, 0.20);
  EXPECT_EQ(p.baseline.quantile_samples, 50u);
  EXPECT_EQ(p.baseline.quantile_confidence, 0.99);
  EXPECT_TRUE(p.baseline.metrics.empty());
  EXPECT_EQ(p.baseline.contention.max_foreign_share, 0.10);
  EXPECT_EQ(p.baseline.contention.max_foreign_iops_ratio, 0.10);
  EXPECT_EQ(p.baseline.contention.min_foreign_load, 50);
  EXPECT_EQ(p.baseline.contention.max_cpu_wait, 0.25);
  EXPECT_EQ(p.baseline.contention.before_seconds, 1.0);
  EXPECT_EQ(p.baseline.contention.max_quantile, 0.0);
  EXPECT_EQ(p.baseline.contention.max_cpu_steal, 0.05);
  EXPECT_TRUE(p.baseline.contention.bands);
  EXPECT_EQ(Names(p),
            (std::vector<std::string>{"randread-4k-qd1", "randwrite-4k-qd1", "seqread-1m-qd8"}));
}

TEST(ProbesConfig, BundledFileHasTheThreeDefaultJobs) {
  const auto c = LoadConfigFile(kBundled, BundledSettings());
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->probes, ProbesConfig{});
  ASSERT_EQ(c->probes.jobs.size(), 3u);
  for (const ProbeJobConfig& job : c->probes.jobs) {
    EXPECT_EQ(job.every, minutes(15)) << job.name;
    EXPECT_EQ(job.jitter, minutes(1)) << job.name;
    EXPECT_EQ(job.timeout, minutes(1)) << job.name;
    EXPECT_EQ(job.spec.name, job.name);
    EXPECT_EQ(job.spec.directory, "probes");  // relative to state_dir, resolved at use
    EXPECT_EQ(job.spec.filename, "");
    EXPECT_EQ(job.spec.TargetPath(), "probes/" + job.name + ".0.0");
    EXPECT_EQ(job.spec.size, 64u << 20);
    EXPECT_EQ(job.spec.engine, probes::EngineKind::kIoUring);
    EXPECT_TRUE(job.spec.direct);
    EXPECT_EQ(job.spec.runtime, seconds(3));
    EXPECT_TRUE(job.spec.time_based);
    EXPECT_TRUE(job.judge.empty()) << job.name;
  }
  const auto& jobs = c->probes.jobs;
  EXPECT_EQ(jobs[0].spec.rw, probes::RwMode::kRandRead);
  EXPECT_EQ(jobs[0].spec.block_size, 4096u);
  EXPECT_EQ(jobs[0].spec.iodepth, 1u);
  EXPECT_EQ(jobs[1].spec.rw, probes::RwMode::kRandWrite);
  EXPECT_EQ(jobs[1].spec.block_size, 4096u);
  EXPECT_EQ(jobs[2].spec.rw, probes::RwMode::kRead);
  EXPECT_EQ(jobs[2].spec.block_size, 1u << 20);
  EXPECT_EQ(jobs[2].spec.iodepth, 8u);
}

TEST(ProbesConfig, EveryKeyIsRead) {
  const Config c = Parsed(std::string(test_data::kEveryProbesKeyButJobs) + R"(
  jobs:
    - name: Job_1.a-b
      every: 1h
      jitter: 0
      timeout: 2m
      options: {rw: randrw, bs: 8k, rwmixread: 70}
      judge: [iops, clat_p99_seconds]
    - name: second
)");
  const ProbesConfig& p = c.probes;
  EXPECT_FALSE(p.enabled);
  EXPECT_EQ(p.max_concurrent, 2u);
  EXPECT_EQ(p.busy_threshold, 0.25);
  EXPECT_EQ(p.busy_window, minutes(2));
  EXPECT_EQ(p.busy_retry, seconds(30));
  EXPECT_EQ(p.max_skips, 3u);
  EXPECT_EQ(p.retention, std::chrono::days(30));
  EXPECT_EQ(p.baseline.runs, 7u);
  EXPECT_EQ(p.baseline.throughput_tolerance, 0.1);
  EXPECT_EQ(p.baseline.latency_tolerance, 0.3);
  EXPECT_EQ(p.baseline.tail_tolerance, 1.0);
  EXPECT_EQ(p.baseline.spread_factor, 2.5);
  EXPECT_EQ(p.baseline.hysteresis, 2u);
  EXPECT_EQ(p.baseline.min_bad_span_ms, 90 * 1000);
  EXPECT_EQ(p.baseline.min_age_ms, 30 * 60 * 1000);
  EXPECT_EQ(p.baseline.throughput_spread_floor, 0.02);
  EXPECT_EQ(p.baseline.latency_spread_floor, 0.5);
  EXPECT_EQ(p.baseline.tail_spread_floor, 1.5);
  EXPECT_EQ(p.baseline.quantile_samples, 20u);
  EXPECT_EQ(p.baseline.quantile_confidence, 0.95);
  EXPECT_EQ(p.baseline.metrics, (std::vector<std::string>{"lat_p99_seconds", "iops"}));
  EXPECT_EQ(p.baseline.contention.max_foreign_share, 0.2);
  EXPECT_EQ(p.baseline.contention.max_foreign_iops_ratio, 2.5);
  EXPECT_EQ(p.baseline.contention.min_foreign_load, 75);
  EXPECT_EQ(p.baseline.contention.max_cpu_wait, 0.5);
  EXPECT_EQ(p.baseline.contention.before_seconds, 2.5);
  EXPECT_EQ(p.baseline.contention.max_quantile, 0.9);
  EXPECT_EQ(p.baseline.contention.max_cpu_steal, 0.3);
  EXPECT_FALSE(p.baseline.contention.bands);
  ASSERT_EQ(Names(p), (std::vector<std::string>{"Job_1.a-b", "second"}));

  const ProbeJobConfig& own = p.jobs[0];  // sets everything itself
  EXPECT_EQ(own.every, std::chrono::hours(1));
  EXPECT_EQ(own.jitter, milliseconds(0));
  EXPECT_EQ(own.timeout, minutes(2));
  EXPECT_EQ(own.spec.rw, probes::RwMode::kRandReadWrite);
  EXPECT_EQ(own.spec.block_size, 8192u);
  EXPECT_EQ(own.spec.rwmixread, 70u);
  EXPECT_EQ(own.spec.directory, "p");
  EXPECT_EQ(own.spec.size, 1u << 20);
  EXPECT_EQ(own.judge, (std::vector<std::string>{"iops", "clat_p99_seconds"}));

  const ProbeJobConfig& inherited = p.jobs[1];  // only a name: all from defaults
  EXPECT_EQ(inherited.every, minutes(5));
  EXPECT_EQ(inherited.jitter, seconds(30));
  EXPECT_EQ(inherited.timeout, seconds(20));
  EXPECT_EQ(inherited.spec.rw, probes::RwMode::kRead);  // fio's default
  EXPECT_EQ(inherited.spec.engine, probes::EngineKind::kPsync);
  EXPECT_FALSE(inherited.spec.direct);   // defaults.options replaced the bundled map
  EXPECT_TRUE(inherited.judge.empty());  // judged on probes.baseline.metrics
}

TEST(ProbesConfig, BaselineKeysAreReadOneByOne) {
  const auto baseline = [](const std::string& keys) {
    return Parsed("probes: {baseline: {" + keys + "}}").probes.baseline;
  };
  EXPECT_EQ(baseline("runs: 5").runs, 5u);
  EXPECT_EQ(baseline("min_age: 90m").min_age_ms, 90 * 60 * 1000);
  EXPECT_EQ(baseline("min_age: 0").min_age_ms, 0);
  EXPECT_EQ(baseline("min_age: 52w").min_age_ms, 52LL * 7 * 24 * 3600 * 1000);
  EXPECT_EQ(baseline("throughput_spread_floor: 0").throughput_spread_floor, 0.0);
  EXPECT_EQ(baseline("throughput_spread_floor: 1").throughput_spread_floor, 1.0);
  EXPECT_EQ(baseline("latency_spread_floor: 100").latency_spread_floor, 100.0);
  EXPECT_EQ(baseline("tail_spread_floor: 0.3").tail_spread_floor, 0.3);
  EXPECT_EQ(baseline("quantile_samples: 0").quantile_samples, 0u);  // rule off
  EXPECT_EQ(baseline("quantile_samples: 1000000").quantile_samples, 1000000u);
  EXPECT_EQ(baseline("quantile_confidence: 0").quantile_confidence, 0.0);  // rule off
  EXPECT_EQ(baseline("quantile_confidence: 0.9999").quantile_confidence, 0.9999);
  EXPECT_EQ(baseline("metrics: [lat_p99_9_seconds]").metrics,
            (std::vector<std::string>{"lat_p99_9_seconds"}));
  EXPECT_TRUE(baseline("metrics: []").metrics.empty());
  EXPECT_EQ(baseline("contention: {max_foreign_share: 1}").contention.max_foreign_share, 1.0);
  EXPECT_EQ(
      baseline("contention: {max_foreign_iops_ratio: 1000}").contention.max_foreign_iops_ratio,
      1000.0);
  EXPECT_EQ(baseline("contention: {max_cpu_wait: 0}").contention.max_cpu_wait, 0.0);
  EXPECT_FALSE(baseline("contention: {bands: false}").contention.bands);
  // The rest of the section keeps its defaults.
  probes::BaselinePolicy expected;
  expected.contention.max_cpu_wait = 0.5;
  EXPECT_EQ(baseline("contention: {max_cpu_wait: 0.5}"), expected);
  EXPECT_EQ(Parsed("probes:\n  baseline:\n    contention:\n").probes, ProbesConfig{});
}

TEST(ProbesConfig, EveryMetricMayBeJudged) {
  std::string all;
  std::vector<std::string> names;
  for (const probes::MetricSpec& spec : probes::BaselineMetrics()) {
    all += (all.empty() ? "" : ", ") + std::string(spec.name);
    names.emplace_back(spec.name);
  }
  EXPECT_EQ(Parsed("probes: {baseline: {metrics: [" + all + "]}}").probes.baseline.metrics, names);
  EXPECT_EQ(Parsed("probes: {jobs: [{name: a, judge: [" + all + "]}]}").probes.jobs[0].judge,
            names);
}

TEST(ProbesConfig, JobJudgeReachesTheJob) {
  const Config c = Parsed(R"(
probes:
  baseline: {metrics: [bandwidth_bytes]}
  jobs:
    - name: a
      judge: [iops]
    - name: b
    - name: c
      judge: []
)");
  const ProbesConfig& p = c.probes;
  ASSERT_EQ(p.jobs.size(), 3u);
  EXPECT_EQ(p.jobs[0].judge, std::vector<std::string>{"iops"});
  EXPECT_TRUE(p.jobs[1].judge.empty());  // probes.baseline.metrics applies
  EXPECT_TRUE(p.jobs[2].judge.empty());
  EXPECT_EQ(p.baseline.metrics, std::vector<std::string>{"bandwidth_bytes"});
}

TEST(ProbesConfig, DefaultsApplyToTheBundledJobs) {
  const Config c = Parsed("probes: {defaults: {every: 5m, timeout: 10s}}");
  ASSERT_EQ(c.probes.jobs.size(), 3u);
  for (const ProbeJobConfig& job : c.probes.jobs) {
    EXPECT_EQ(job.every, minutes(5)) << job.name;
    EXPECT_EQ(job.timeout, seconds(10)) << job.name;
    EXPECT_EQ(job.jitter, minutes(1)) << job.name;
    EXPECT_TRUE(job.spec.direct) << job.name;
  }
  const Config moved = Parsed(
      "probes: {defaults: {options: {directory: /data/iowatch, size: 16M, runtime: 1s, "
      "time_based: 1}}}");
  EXPECT_EQ(moved.probes.jobs[2].spec.TargetPath(), "/data/iowatch/seqread-1m-qd8.0.0");
  EXPECT_EQ(moved.probes.jobs[2].spec.block_size, 1u << 20);
  EXPECT_EQ(moved.probes.jobs[2].spec.engine, probes::EngineKind::kPsync);
}

TEST(ProbesConfig, JobOptionsOverrideDefaultsAndTargetsReplaceEachOther) {
  const Config c = Parsed(R"(
probes:
  jobs:
    - {name: a, options: {bs: 64k, size: 128M, ioengine: psync}}
    - {name: b, options: {filename: /dev/shm/x, size: 1M, direct: 0}}
    - {name: c, options: {directory: /srv/probes}}
)");
  ASSERT_EQ(c.probes.jobs.size(), 3u);
  const probes::JobSpec& a = c.probes.jobs[0].spec;
  EXPECT_EQ(a.block_size, 65536u);
  EXPECT_EQ(a.size, 128u << 20);
  EXPECT_EQ(a.engine, probes::EngineKind::kPsync);
  EXPECT_TRUE(a.direct);  // still from the defaults
  const probes::JobSpec& b = c.probes.jobs[1].spec;
  EXPECT_EQ(b.filename, "/dev/shm/x");
  EXPECT_EQ(b.directory, "");  // a job's filename replaces the default directory
  EXPECT_EQ(c.probes.jobs[2].spec.TargetPath(), "/srv/probes/c.0.0");
}

TEST(ProbesConfig, AJobMayComeFromAFioJobFile) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::ofstream(dir.File("nvme.fio")) << "[global]\nioengine=libaio\niodepth=16\n"
                                         "[randread]\nrw=randread\nbs=8k\nnumjobs=2\n"
                                         "[global]\nbs=1m\n[seqread]\nrw=read\n";
  std::ofstream(dir.File("iowatch.yaml"))
      << "probes:\n  jobs:\n"
         "    - {name: a, job_file: nvme.fio, job_section: randread, options: {iodepth: 4}}\n"
         "    - {name: b, job_file: "
      << dir.File("nvme.fio") << ", job_section: seqread}\n";
  const auto c = LoadConfigFile(dir.File("iowatch.yaml"), {});
  ASSERT_TRUE(c) << c.error().ToString();
  ASSERT_EQ(c->probes.jobs.size(), 2u);
  const probes::JobSpec& a = c->probes.jobs[0].spec;
  EXPECT_EQ(a.name, "a");  // the config's name, not the section's
  EXPECT_EQ(a.engine, probes::EngineKind::kLibaio);
  EXPECT_EQ(a.rw, probes::RwMode::kRandRead);
  EXPECT_EQ(a.block_size, 8192u);
  EXPECT_EQ(a.numjobs, 2u);
  EXPECT_EQ(a.iodepth, 4u);  // options: come after the file's
  EXPECT_TRUE(a.direct);     // the defaults' still apply under both
  const probes::JobSpec& b = c->probes.jobs[1].spec;
  EXPECT_EQ(b.block_size, 1u << 20);  // the second [global]
  EXPECT_EQ(b.iodepth, 16u);

  // Errors point at job_file and say what the file holds.
  const std::string file = dir.File("nvme.fio");
  EXPECT_EQ(MessageOf("probes: {jobs: [{name: a, job_file: " + file + "}]}"),
            "t.yaml:1:37: probes.jobs[0].job_file: " + file +
                ": the file has 2 jobs (\"randread\", \"seqread\"): say which one");
  EXPECT_EQ(MessageOf("probes: {jobs: [{name: a, job_file: " + file + ", job_section: x}]}"),
            "t.yaml:1:37: probes.jobs[0].job_file: " + file +
                ": no job \"x\" in the file (it has \"randread\", \"seqread\")");
  std::ofstream(dir.File("bad.fio")) << "[j]\nbs=4q\n";
  EXPECT_EQ(MessageOf("probes: {jobs: [{name: a, job_file: " + dir.File("bad.fio") + "}]}"),
            "t.yaml:1:37: probes.jobs[0].job_file: " + dir.File("bad.fio") +
                ":2: bs: expected a size such as \"4k\", \"64KiB\" or \"1m\", found \"4q\"");
}

// job_file read the whole of /dev/zero (2.1 GB in 4 s)
// and blocked on a FIFO, in check-config and in the daemon's event loop at
// SIGHUP.
TEST(ProbesConfig, AJobFileIsARegularFileOfBoundedSize) {
  EXPECT_EQ(MessageOf("probes: {jobs: [{name: a, job_file: /dev/zero}]}"),
            "t.yaml:1:37: probes.jobs[0].job_file: /dev/zero: cannot read the job file: "
            "expected a regular file, found a character device");
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string fifo = dir.File("jobs.fio");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  auto message = std::async(std::launch::async, [&] {
    return MessageOf("probes: {jobs: [{name: a, job_file: " + fifo + "}]}");
  });
  if (message.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    close(open(fifo.c_str(), O_WRONLY | O_NONBLOCK));  // let the blocked reader go
    FAIL() << "the config blocked on a FIFO job_file";
  }
  EXPECT_EQ(message.get(), "t.yaml:1:37: probes.jobs[0].job_file: " + fifo +
                               ": cannot read the job file: expected a regular file, found a FIFO");
}

// "D/x\0y" passed check-config and the probe acted on "D/x".
TEST(ProbesConfig, ANulByteInAPathIsRefusedNotCut) {
  EXPECT_EQ(MessageOf("probes: {jobs: [{name: a, options: {directory: \"D/x\\0y\"}}]}"),
            "t.yaml:1:48: probes.jobs[0].options.directory: expected no NUL byte, found "
            "\"D/x\\x00y\"");
  EXPECT_EQ(MessageOf("probes: {jobs: [{name: a, options: {filename: \"/x\\0y\"}}]}"),
            "t.yaml:1:47: probes.jobs[0].options.filename: expected no NUL byte, found "
            "\"/x\\x00y\"");
  EXPECT_EQ(MessageOf("probes: {jobs: [{name: a, job_file: \"/x.fio\\0y\"}]}"),
            "t.yaml:1:37: probes.jobs[0].job_file: expected a path without NUL bytes, found "
            "\"/x.fio\\x00y\"");
}

TEST(ProbesConfig, ValuesMayBeNumbersOrStrings) {
  const Config numbers = Parsed("probes: {jobs: [{name: a, options: {iodepth: 4, direct: 1}}]}");
  const Config strings =
      Parsed("probes: {jobs: [{name: a, options: {iodepth: \"4\", direct: '1'}}]}");
  EXPECT_EQ(numbers.probes, strings.probes);
  EXPECT_EQ(numbers.probes.jobs[0].spec.iodepth, 4u);
  const Config flag = Parsed("probes: {jobs: [{name: a, options: {time_based: \"\"}}]}");
  EXPECT_TRUE(flag.probes.jobs[0].spec.time_based);
}

TEST(ProbesConfig, EmptyJobListMeansNoProbes) {
  EXPECT_TRUE(Parsed("probes: {jobs: []}").probes.jobs.empty());
  EXPECT_TRUE(Parsed("probes:\n  jobs: []\n").probes.enabled);
  // A section with nothing in it keeps the bundled jobs.
  EXPECT_EQ(Parsed("probes:\n").probes, ProbesConfig{});
  EXPECT_EQ(Parsed("probes: {defaults: {options: ~}, baseline: {}}").probes, ProbesConfig{});
}

TEST(ProbesConfig, BoundaryValues) {
  const ProbesConfig p = Parsed(
                             "probes: {busy_threshold: 1, max_concurrent: 64, max_skips: 1, "
                             "retention: 1h, busy_window: 2s, busy_retry: 1s}")
                             .probes;
  EXPECT_EQ(p.busy_threshold, 1.0);
  EXPECT_EQ(p.max_concurrent, 64u);
  EXPECT_EQ(p.max_skips, 1u);
  EXPECT_EQ(Parsed("probes: {busy_threshold: 0.001}").probes.busy_threshold, 0.001);
  EXPECT_EQ(Parsed("probes: {busy_threshold: 5e-1}").probes.busy_threshold, 0.5);
  EXPECT_EQ(Parsed("probes: {baseline: {throughput_tolerance: 0, spread_factor: 0}}")
                .probes.baseline.spread_factor,
            0.0);
  // jitter exactly half of every; timeout just above the runtime.
  const ProbeJobConfig job =
      Parsed("probes: {jobs: [{name: a, every: 2s, jitter: 1s, timeout: 3001ms}]}").probes.jobs[0];
  EXPECT_EQ(job.jitter, seconds(1));
  EXPECT_EQ(job.timeout, milliseconds(3001));
}

TEST(ProbesConfig, ResolveProbeTargetPlacesRelativePathsUnderTheStateDir) {
  probes::JobSpec spec;
  spec.name = "a";
  spec.directory = "probes";
  EXPECT_EQ(ResolveProbeTarget(spec, "/var/lib/iowatch").TargetPath(),
            "/var/lib/iowatch/probes/a.0.0");
  spec.directory = "./x/../probes/";
  EXPECT_EQ(ResolveProbeTarget(spec, "/s").directory, "/s/probes/");
  spec.directory = "/abs";
  EXPECT_EQ(ResolveProbeTarget(spec, "/s").directory, "/abs");
  spec.directory = "";
  spec.filename = "f.bin";
  EXPECT_EQ(ResolveProbeTarget(spec, "/s").filename, "/s/f.bin");
  spec.filename = "/dev/sdb";
  EXPECT_EQ(ResolveProbeTarget(spec, "/s").filename, "/dev/sdb");
}

TEST(ProbesConfigErrors, UnknownKeys) {
  EXPECT_EQ(MessageOf("probes:\n  enable: true\n"),
            "t.yaml:2:3: probes.enable: unknown key; expected one of enabled, max_concurrent, "
            "busy_threshold, busy_window, busy_retry, max_skips, retention, baseline, defaults, "
            "jobs");
  EXPECT_EQ(MessageOf("probes: {baseline: {run: 5}}"),
            "t.yaml:1:21: probes.baseline.run: unknown key; expected one of runs, "
            "throughput_tolerance, latency_tolerance, tail_tolerance, spread_factor, hysteresis, "
            "min_bad_span, "
            "min_age, throughput_spread_floor, latency_spread_floor, tail_spread_floor, "
            "quantile_samples, quantile_confidence, metrics, contention");
  EXPECT_EQ(MessageOf("probes:\n  baseline:\n    contention:\n      max_share: 0.1\n"),
            "t.yaml:4:7: probes.baseline.contention.max_share: unknown key; expected one of "
            "max_foreign_share, max_foreign_iops_ratio, min_foreign_load, max_cpu_wait, "
            "max_cpu_steal, max_quantile, before, bands");
  EXPECT_EQ(MessageOf("probes: {defaults: {rw: read}}"),
            "t.yaml:1:21: probes.defaults.rw: unknown key; expected one of every, jitter, "
            "timeout, options");
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n    - name: a\n      evry: 1m\n"),
            "t.yaml:4:7: probes.jobs[0].evry: unknown key; expected one of name, every, jitter, "
            "timeout, options, job_file, job_section, judge");
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n    - name: a\n      options: {bss: 4k}\n"),
            "t.yaml:4:17: probes.jobs[0].options.bss: unknown fio job option; did you mean "
            "\"bs\"?");
  EXPECT_EQ(ErrorOf("probes: {jobs: [{name: a, options: {bss: 4k}}]}").code, ErrorCode::kParse);
}

TEST(ProbesConfigErrors, BadJobOptionIsLocated) {
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n    - name: a\n    - name: b\n"
                      "      options: {rw: randread, bs: 4q}\n"),
            "t.yaml:5:35: probes.jobs[1].options.bs: expected a size such as \"4k\", \"64KiB\" or "
            "\"1m\", found \"4q\"");
  EXPECT_EQ(ErrorOf("probes: {jobs: [{name: a, options: {bs: 4q}}]}").code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(MessageOf("probes: {defaults: {options: {rw: sideways}}}"),
            "t.yaml:1:35: probes.defaults.options.rw: expected one of read, write, randread, "
            "randwrite, rw, readwrite, randrw, each with an optional \":N\", found \"sideways\"");
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n    - name: x\n      options:\n        name: y\n"),
            "t.yaml:5:9: probes.jobs[0].options.name: not allowed: a probe's name is its job's "
            "name");
  EXPECT_EQ(MessageOf("probes: {jobs: [{name: a, options: {rw: [a]}}]}"),
            "t.yaml:1:41: probes.jobs[0].options.rw: expected an option value (a string or a "
            "number; 1 for a flag like time_based), found a list");
  EXPECT_EQ(MessageOf("probes: {jobs: [{name: a, options: {direct: ~}}]}"),
            "t.yaml:1:37: probes.jobs[0].options.direct: expected an option value (a string or a "
            "number; 1 for a flag like time_based), found no value");
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n    - name: a\n      options: {bs: 4k, bs: 8k}\n"),
            "t.yaml:4:25: probes.jobs[0].options.bs: duplicate key");
  EXPECT_EQ(MessageOf("probes: {jobs: [{name: a, options: [bs]}]}"),
            "t.yaml:1:36: probes.jobs[0].options: expected a map of fio job options, found a list");
}

TEST(ProbesConfigErrors, OptionsThatDoNotGoTogetherPointAtTheJob) {
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n    - name: a\n      options: {size: 0}\n"),
            "t.yaml:3:7: probes.jobs[0]: size: required with directory (iowatch creates "
            "\"probes/a.0.0\")");
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n    - name: a\n      options: {runtime: 0}\n"),
            "t.yaml:3:7: probes.jobs[0]: time_based: needs a runtime greater than 0");
  // The bundled jobs can only be broken by the defaults.
  EXPECT_EQ(MessageOf("probes:\n  defaults:\n    options: {size: 1M}\n"),
            "t.yaml:3:14: probes.defaults.options: filename or directory is required (bundled "
            "job randread-4k-qd1)");
}

TEST(ProbesConfigErrors, JobNames) {
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n    - name: a\n    - name: b\n    - name: a\n"),
            "t.yaml:5:13: probes.jobs[2].name: duplicate job name \"a\" (also probes.jobs[0])");
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n    - every: 1m\n"),
            "t.yaml:3:7: probes.jobs[0]: expected a name");
  EXPECT_EQ(MessageOf("probes: {jobs: [{name: a/b}]}"),
            "t.yaml:1:24: probes.jobs[0].name: expected 1 to 64 letters, digits, '.', '_' or "
            "'-', starting with a letter or digit, found \"a/b\"");
  for (const std::string& bad :
       std::vector<std::string>{"..", ".hidden", "-x", "a b", "\"\"", "é", std::string(65, 'a')}) {
    EXPECT_EQ(ErrorOf("probes: {jobs: [{name: " + bad + "}]}").code, ErrorCode::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(Parsed("probes: {jobs: [{name: " + std::string(64, 'a') + "}]}").probes.jobs.size(),
            1u);
}

TEST(ProbesConfigErrors, Timing) {
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n    - name: a\n      jitter: 10m\n"),
            "t.yaml:4:15: probes.jobs[0].jitter: expected at most half of every (15m), found 10m");
  EXPECT_EQ(MessageOf("probes:\n  defaults:\n    jitter: 10m\n"),
            "t.yaml:3:13: probes.defaults.jitter: expected at most half of every (15m), found 10m "
            "(bundled job randread-4k-qd1)");
  // The job's own `every` no longer fits the default jitter: the job is at fault.
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n    - name: a\n      every: 1s\n"),
            "t.yaml:3:7: probes.jobs[0]: jitter: expected at most half of every (1s), found 1m");
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n    - name: a\n      timeout: 3s\n"),
            "t.yaml:4:16: probes.jobs[0].timeout: expected more than runtime + ramp_time (3s), "
            "found 3s");
  EXPECT_EQ(MessageOf("probes:\n  defaults:\n    timeout: 2s\n"),
            "t.yaml:3:14: probes.defaults.timeout: expected more than runtime + ramp_time (3s), "
            "found 2s (bundled job randread-4k-qd1)");
  EXPECT_EQ(MessageOf("probes: {jobs: [{name: a, every: 500ms}]}"),
            "t.yaml:1:34: probes.jobs[0].every: expected a duration of at least 1s, found "
            "\"500ms\"");
}

TEST(ProbesConfigErrors, Values) {
  EXPECT_EQ(MessageOf("probes: {busy_threshold: 0}"),
            "t.yaml:1:26: probes.busy_threshold: expected a number greater than 0 and at most 1, "
            "found \"0\"");
  for (const char* bad : {"1.5", "-0.5"}) {
    EXPECT_EQ(ErrorOf(std::string("probes: {busy_threshold: ") + bad + "}").code,
              ErrorCode::kInvalidArgument)
        << bad;
  }
  for (const char* bad : {"nan", "inf", "50%", "+0.5", "0x1", "0.5.", "\"\"", "[0.5]", "half"}) {
    EXPECT_EQ(ErrorOf(std::string("probes: {busy_threshold: ") + bad + "}").code, ErrorCode::kParse)
        << bad;
  }
  EXPECT_EQ(MessageOf("probes: {max_concurrent: 0}"),
            "t.yaml:1:26: probes.max_concurrent: expected an integer from 1 to 64, found \"0\"");
  EXPECT_EQ(ErrorOf("probes: {max_concurrent: 65}").code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(MessageOf("probes: {max_skips: 0}"),
            "t.yaml:1:21: probes.max_skips: expected an integer from 1 to 10000, found \"0\"");
  EXPECT_EQ(MessageOf("probes: {retention: 30m}"),
            "t.yaml:1:21: probes.retention: expected a duration of at least 1h, found \"30m\"");
  EXPECT_EQ(ErrorOf("probes: {busy_retry: 0}").code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf("probes: {enabled: yes}").code, ErrorCode::kParse);
  EXPECT_EQ(MessageOf("probes: {baseline: {throughput_tolerance: 1.5}}"),
            "t.yaml:1:43: probes.baseline.throughput_tolerance: expected a number at least 0 "
            "and at most 1, found \"1.5\"");
  EXPECT_EQ(ErrorOf("probes: {baseline: {latency_tolerance: -1}}").code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf("probes: {baseline: {runs: 0}}").code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(ErrorOf("probes: {baseline: {hysteresis: 1001}}").code, ErrorCode::kInvalidArgument);
}

// Each new baseline key out of range: located at the value, naming the key.
TEST(ProbesConfigErrors, BaselineValues) {
  EXPECT_EQ(MessageOf("probes:\n  baseline:\n    min_age: 53w\n"),
            "t.yaml:3:14: probes.baseline.min_age: expected a duration of at most 52w, found "
            "\"53w\"");
  EXPECT_EQ(MessageOf("probes:\n  baseline:\n    min_age: 1.5h\n").substr(0, 37),
            "t.yaml:3:14: probes.baseline.min_age:");
  EXPECT_EQ(ErrorOf("probes: {baseline: {min_age: 1.5h}}").code, ErrorCode::kParse);
  EXPECT_EQ(MessageOf("probes:\n  baseline:\n    throughput_spread_floor: 1.5\n"),
            "t.yaml:3:30: probes.baseline.throughput_spread_floor: expected a number at least 0 "
            "and at most 1, found \"1.5\"");
  EXPECT_EQ(MessageOf("probes: {baseline: {latency_spread_floor: 101}}"),
            "t.yaml:1:43: probes.baseline.latency_spread_floor: expected a number at least 0 and "
            "at most 100, found \"101\"");
  EXPECT_EQ(MessageOf("probes: {baseline: {tail_spread_floor: -0.1}}"),
            "t.yaml:1:40: probes.baseline.tail_spread_floor: expected a number at least 0 and at "
            "most 100, found \"-0.1\"");
  EXPECT_EQ(MessageOf("probes: {baseline: {quantile_samples: 1000001}}"),
            "t.yaml:1:39: probes.baseline.quantile_samples: expected an integer from 0 to "
            "1000000, found \"1000001\"");
  EXPECT_EQ(MessageOf("probes: {baseline: {quantile_confidence: 1}}"),
            "t.yaml:1:42: probes.baseline.quantile_confidence: expected a number at least 0 and "
            "at most 0.9999, found \"1\"");
  EXPECT_EQ(MessageOf("probes:\n  baseline:\n    contention:\n      max_foreign_share: 1.1\n"),
            "t.yaml:4:26: probes.baseline.contention.max_foreign_share: expected a number at "
            "least 0 and at most 1, found \"1.1\"");
  EXPECT_EQ(MessageOf("probes: {baseline: {contention: {max_foreign_iops_ratio: 1001}}}"),
            "t.yaml:1:58: probes.baseline.contention.max_foreign_iops_ratio: expected a number "
            "at least 0 and at most 1000, found \"1001\"");
  EXPECT_EQ(MessageOf("probes: {baseline: {contention: {max_cpu_wait: -1}}}"),
            "t.yaml:1:48: probes.baseline.contention.max_cpu_wait: expected a number at least 0 "
            "and at most 1, found \"-1\"");
  EXPECT_EQ(MessageOf("probes: {baseline: {contention: {bands: yes}}}"),
            "t.yaml:1:41: probes.baseline.contention.bands: expected true or false, found "
            "\"yes\"");
  EXPECT_EQ(MessageOf("probes: {baseline: {contention: [bands]}}"),
            "t.yaml:1:33: probes.baseline.contention: expected a map with keys max_foreign_share, "
            "max_foreign_iops_ratio, min_foreign_load, max_cpu_wait, max_cpu_steal, max_quantile, "
            "before, bands, "
            "found a list");
  for (const char* bad :
       {"min_age: 53w", "throughput_spread_floor: 2", "latency_spread_floor: -1",
        "tail_spread_floor: 1000", "quantile_samples: 2000000", "quantile_confidence: 0.99999",
        "contention: {max_cpu_wait: 2}", "contention: {before: 61s}"}) {
    EXPECT_EQ(ErrorOf(std::string("probes: {baseline: {") + bad + "}}").code,
              ErrorCode::kInvalidArgument)
        << bad;
  }
  for (const char* bad : {"quantile_samples: -1", "quantile_samples: 0.5",
                          "quantile_confidence: 99%", "throughput_spread_floor: nan"}) {
    EXPECT_EQ(ErrorOf(std::string("probes: {baseline: {") + bad + "}}").code, ErrorCode::kParse)
        << bad;
  }
}

TEST(ProbesConfigErrors, Metrics) {
  const std::string valid =
      "iops, bandwidth_bytes, clat_mean_seconds, clat_p50_seconds, clat_p90_seconds, "
      "clat_p99_seconds, clat_p99_9_seconds, lat_mean_seconds, slat_mean_seconds, "
      "lat_p50_seconds, lat_p90_seconds, lat_p99_seconds, lat_p99_9_seconds";
  EXPECT_EQ(
      MessageOf("probes:\n  baseline:\n    metrics: [nope]\n"),
      "t.yaml:3:15: probes.baseline.metrics[0]: expected one of " + valid + ", found \"nope\"");
  EXPECT_EQ(MessageOf("probes:\n  baseline:\n    metrics: [iops, lat_p99_seconds, iops]\n"),
            "t.yaml:3:38: probes.baseline.metrics[2]: iops is listed twice");
  EXPECT_EQ(ErrorOf("probes: {baseline: {metrics: [iops, iops]}}").code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(MessageOf("probes: {baseline: {metrics: iops}}"),
            "t.yaml:1:30: probes.baseline.metrics: expected a list of metrics (" + valid +
                "), found \"iops\"");
  EXPECT_EQ(MessageOf("probes:\n  baseline:\n    metrics:\n"),
            "t.yaml:3:5: probes.baseline.metrics: expected a list of metrics (" + valid +
                "), found no value");
  EXPECT_EQ(MessageOf("probes: {baseline: {metrics: [[iops]]}}"),
            "t.yaml:1:31: probes.baseline.metrics[0]: expected a string, found a list");
  // Names are exact: no other case, no unit-less spelling.
  for (const char* bad : {"IOPS", "lat_p99", "p99", "\"\""}) {
    EXPECT_EQ(ErrorOf(std::string("probes: {baseline: {metrics: [") + bad + "]}}").code,
              ErrorCode::kParse)
        << bad;
  }
  // A job's judge list is checked the same way.
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n    - name: a\n      judge: [iops, nope]\n"),
            "t.yaml:4:21: probes.jobs[0].judge[1]: expected one of " + valid + ", found \"nope\"");
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n    - name: a\n      judge: [iops, iops]\n"),
            "t.yaml:4:21: probes.jobs[0].judge[1]: iops is listed twice");
  EXPECT_EQ(
      MessageOf("probes: {jobs: [{name: a, judge: {iops: 1}}]}"),
      "t.yaml:1:34: probes.jobs[0].judge: expected a list of metrics (" + valid + "), found a map");
}

TEST(ProbesConfigErrors, WrongShapes) {
  EXPECT_EQ(MessageOf("probes:\n  jobs:\n"),
            "t.yaml:2:3: probes.jobs: expected a list of jobs ([] for none), found no value");
  EXPECT_EQ(MessageOf("probes: {jobs: {name: a}}"),
            "t.yaml:1:16: probes.jobs: expected a list of jobs ([] for none), found a map");
  EXPECT_EQ(MessageOf("probes: {jobs: [a]}"),
            "t.yaml:1:17: probes.jobs[0]: expected a map with keys name, every, jitter, timeout, "
            "options, job_file, job_section, judge, found \"a\"");
  EXPECT_EQ(MessageOf("probes: [a]"),
            "t.yaml:1:9: probes: expected a map with keys enabled, max_concurrent, "
            "busy_threshold, busy_window, busy_retry, max_skips, retention, baseline, defaults, "
            "jobs, found a list");
}

TEST(ProbesConfigErrors, BusyWindowNeedsTwoSamplingIntervals) {
  EXPECT_EQ(MessageOf("sampling: {interval: 45s, window: 10m}"),
            "t.yaml:1:22: sampling.interval: expected at most half of probes.busy_window (1m), "
            "found 45s");
  EXPECT_EQ(MessageOf("sampling: {interval: 2s}\nprobes: {busy_window: 3s}"),
            "t.yaml:2:23: probes.busy_window: expected at least twice sampling.interval (4s), "
            "found 3s");
}

}  // namespace
}  // namespace iowatch::config
