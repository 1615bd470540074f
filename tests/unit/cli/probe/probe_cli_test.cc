// `iowatch probe`'s command line and reports: fio's option spelling, jobs
// per run, --help from the option table (and docs/commands.md showing the same text),
// fio's JSON layout and arithmetic for what we measure, and engine fallbacks
// in both outputs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli/probe/probe_format.h"
#include "cli/probe/probe_options.h"
#include "tests/unit/source_tree.h"

namespace iowatch::daemon {
namespace {

using probes::ProbeResult;

TEST(ProbeArgs, FioSpellingPassesThroughInOrder) {
  const auto o =
      ParseProbeArgs({"--name=p", "--filename=/var/tmp/p.dat", "--rw=randread", "--bs=8k",
                      "--iodepth=32", "--ioengine=io_uring", "--direct=1", "--size=256M",
                      "--runtime=10", "--time_based", "--output-format=json"});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->format, ProbeOutputFormat::kJson);
  ASSERT_EQ(o->jobs.jobs.size(), 1u);
  const probes::JobSpec& spec = o->jobs.jobs[0].spec;
  EXPECT_EQ(spec.rw, probes::RwMode::kRandRead);
  EXPECT_EQ(spec.block_size, 8192u);
  EXPECT_EQ(spec.iodepth, 32u);
  EXPECT_EQ(spec.engine, probes::EngineKind::kIoUring);
  EXPECT_TRUE(spec.direct);
  EXPECT_TRUE(spec.time_based);
  EXPECT_EQ(spec.size, 256u << 20);
  const auto& job = o->jobs.jobs[0].options;
  ASSERT_EQ(job.size(), 10u);  // everything but --output-format, as typed
  EXPECT_EQ(job[9].name, "time_based");
  EXPECT_EQ(job[9].value, "");
  EXPECT_FALSE(o->policy.allow_block_device);
  EXPECT_FALSE(o->policy.destructive);
}

TEST(ProbeArgs, SafetyFlags) {
  const auto o = ParseProbeArgs(
      {"--filename=/dev/loop0", "--rw=read", "--allow-block-device", "--destructive=1"});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_TRUE(o->policy.allow_block_device);
  EXPECT_TRUE(o->policy.destructive);
}

TEST(ProbeArgs, ErrorsNameTheArgument) {
  const auto format = ParseProbeArgs({"--filename=/x", "--output-format=xml"});
  ASSERT_FALSE(format);
  EXPECT_NE(format.error().message.find("--output-format"), std::string::npos);
  EXPECT_EQ(format.error().message, "--output-format: expected normal or json, found \"xml\"");
  const auto eta = ParseProbeArgs({"--filename=/x", "--eta=sometimes"});
  ASSERT_FALSE(eta);
  EXPECT_EQ(eta.error().message, "--eta: expected auto, always or never, found \"sometimes\"");
  EXPECT_EQ(ParseProbeArgs({"--filename=/x", "--eta=never"})->progress, ProgressMode::kNever);

  const auto bare = ParseProbeArgs({"--filename=/x", "randread"});
  ASSERT_FALSE(bare);
  EXPECT_NE(bare.error().message.find("randread"), std::string::npos);

  // Each --name begins a job, with the options before the first for all.
  const auto second_lacks_target = ParseProbeArgs({"--name=a", "--filename=/x", "--name=b"});
  ASSERT_FALSE(second_lacks_target);
  EXPECT_NE(second_lacks_target.error().message.find("job \"b\": filename or directory"),
            std::string::npos)
      << second_lacks_target.error().message;
  const auto two_jobs = ParseProbeArgs(
      {"--filename=/x", "--name=a", "--numjobs=2", "--name=b", "--stonewall", "--eta=never"});
  ASSERT_TRUE(two_jobs) << two_jobs.error().ToString();
  ASSERT_EQ(two_jobs->jobs.jobs.size(), 2u);
  EXPECT_EQ(two_jobs->jobs.Clones(), 3u);
  EXPECT_EQ(two_jobs->jobs.jobs[1].phase, 1u);

  const auto file_and_options = ParseProbeArgs({"jobs.fio", "--bs=8k"});
  ASSERT_FALSE(file_and_options);
  EXPECT_NE(file_and_options.error().message.find("go in the job file"), std::string::npos);
  const auto two_files = ParseProbeArgs({"a.fio", "b.fio"});
  ASSERT_FALSE(two_files);
  EXPECT_NE(two_files.error().message.find("one job file"), std::string::npos);

  const auto bad_bs = ParseProbeArgs({"--filename=/x", "--bs=4q"});
  ASSERT_FALSE(bad_bs);
  EXPECT_TRUE(bad_bs.error().message.starts_with("bs")) << bad_bs.error().message;
}

TEST(ProbeArgs, HelpStopsParsing) {
  for (const char* help : {"--help", "-h"}) {
    const auto o = ParseProbeArgs({"--filename=/x", help, "--bs=4q"});
    ASSERT_TRUE(o) << o.error().ToString();
    EXPECT_TRUE(o->help);
  }
  EXPECT_FALSE(ParseProbeArgs({"--filename=/x"})->help);
}

TEST(ProbeUsage, ListsEveryOptionOfTheTableAndTheCliFlags) {
  const std::string usage = ProbeUsage();
  EXPECT_NE(usage.find(probes::JobOptionsHelp()), std::string::npos);
  for (const std::string_view name : probes::JobOptionNames()) {
    EXPECT_NE(usage.find(fmt::format("--{}", name)), std::string::npos) << name;
  }
  for (const char* flag : {"--output-format=normal|json", "--eta=auto|always|never",
                           "--allow-block-device[=0|1]", "--destructive[=0|1]", "--help"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

// docs/commands.md's usage block is the help text itself, so neither can drift.
TEST(ProbeUsage, CommandsDocShowsItVerbatim) {
  std::ifstream in(iowatch::testing::SourceDir() + "/docs/commands.md");
  ASSERT_TRUE(in) << "docs/commands.md not found";
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const std::string heading = "## `iowatch probe`\n\n```\n";
  const size_t start = doc.find(heading);
  ASSERT_NE(start, std::string::npos) << "no `iowatch probe` section with a usage block";
  const size_t body = start + heading.size();
  const size_t end = doc.find("```\n", body);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(doc.substr(body, end - body), ProbeUsage())
      << "update docs/commands.md's `iowatch probe` block with `iowatch probe --help`";
}

ProbeResult SyntheticResult() {
  ProbeResult r;
  r.spec.name = "synthetic";
  r.spec.rw = probes::RwMode::kRandRead;
  r.elapsed = std::chrono::milliseconds(2000);
  r.read.ios = 1000;
  r.read.bytes = 1000 * 4096;
  r.read.runtime = std::chrono::microseconds(2'000'900);  // fio rounds down to 2000 ms
  for (uint64_t i = 1; i <= 1000; ++i) {
    const uint64_t clat = 50'000 + i * 100;
    r.read.slat.Add(1000);
    r.read.clat.Add(clat);
    r.read.lat.Add(clat + 1000);
    r.read.clat_histogram.Record(clat);
    r.read.lat_histogram.Record(clat + 1000);
  }
  r.cpu.user_seconds = 0.1;
  r.cpu.system_seconds = 0.5;
  r.cpu.voluntary_switches = 7;
  r.cpu.involuntary_switches = 3;
  return r;
}

std::string Field(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\" : ");
  if (at == std::string::npos) return "<missing " + key + ">";
  const size_t start = at + key.size() + 5;
  return json.substr(start, json.find_first_of(",\n", start) - start);
}

TEST(ProbeJson, FioArithmeticAndNumberFormats) {
  const std::vector<probes::JobOption> options = {
      {"name", "synthetic"}, {"time_based", ""}, {"direct", "1"}};
  const std::string json = FormatProbeJson(
      SyntheticResult(), {options, "/var/tmp/p.dat", 254, 0, 1'700'000'000'123, std::nullopt});
  // bw_bytes = 1000 · bytes / runtime_ms, bw in KiB/s, iops = 1000 · ios / runtime_ms.
  EXPECT_EQ(Field(json, "io_bytes"), "4096000");
  EXPECT_EQ(Field(json, "io_kbytes"), "4000");
  EXPECT_EQ(Field(json, "bw_bytes"), "2048000");
  EXPECT_EQ(Field(json, "bw"), "2000");
  EXPECT_EQ(Field(json, "iops"), "500.000000");
  EXPECT_EQ(Field(json, "runtime"), "2000");
  EXPECT_EQ(Field(json, "total_ios"), "1000");
  EXPECT_EQ(Field(json, "timestamp"), "1700000000");
  EXPECT_EQ(Field(json, "timestamp_ms"), "1700000000123");
  EXPECT_EQ(Field(json, "usr_cpu"), "5.000000");
  EXPECT_EQ(Field(json, "sys_cpu"), "25.000000");
  EXPECT_EQ(Field(json, "ctx"), "10");
  // fio 3.33 lists the options given a value, not the bare flags (checked:
  // --time_based and --group_reporting are absent from its "job options").
  EXPECT_EQ(Field(json, "time_based"), "<missing time_based>");
  EXPECT_EQ(Field(json, "direct"), "\"1\"");
  EXPECT_EQ(Field(json, "mean"), "1000.000000");  // slat_ns comes first
  EXPECT_NE(json.find("\"99.990000\" : "), std::string::npos);
  EXPECT_NE(json.find("\"clat_ns\" : {"), std::string::npos);
  // A direction without I/O has its summary but no percentiles, as fio.
  const size_t write_at = json.find("\"write\" : {");
  ASSERT_NE(write_at, std::string::npos);
  EXPECT_EQ(json.find("percentile", write_at), std::string::npos);
}

TEST(ProbeJson, EngineFallbacksInTheIowatchObject) {
  ProbeResult result = SyntheticResult();
  const ProbeReportContext context{{}, "/var/tmp/p.dat", 254, 0, 0, std::nullopt};
  EXPECT_NE(FormatProbeJson(result, context).find("\"fallbacks\" : [\n        ]"),
            std::string::npos)
      << FormatProbeJson(result, context);
  result.fallbacks = {{"fixedbufs", "registering failed with ENOMEM"}, {"submit_all", "old"}};
  const std::string json = FormatProbeJson(result, context);
  const size_t iowatch = json.find("\"iowatch\" : {");
  ASSERT_NE(iowatch, std::string::npos);
  EXPECT_NE(json.find("\"fallbacks\" : [\n"
                      "          {\n"
                      "            \"name\" : \"fixedbufs\",\n"
                      "            \"reason\" : \"registering failed with ENOMEM\"\n"
                      "          },\n"
                      "          {\n"
                      "            \"name\" : \"submit_all\",",
                      iowatch),
            std::string::npos)
      << json;
}

// fio's disk_util: one entry for the target's whole disk, after the jobs,
// with fio's names (util a float); the text's "Disk stats (read/write)".
TEST(ProbeJson, DiskUtilAfterTheJobsAndDiskStatsInTheSummary) {
  ProbeResult result = SyntheticResult();
  ProbeReportContext context{{}, "/var/tmp/p.dat", 254, 0, 0, std::nullopt};
  EXPECT_EQ(FormatProbeJson(result, context).find("disk_util"), std::string::npos);
  EXPECT_EQ(FormatProbeNormal(result, context).find("Disk stats"), std::string::npos);
  context.disk_util = collectors::DiskUtil{"vda", 26467, 7, 0, 2, 950, 13, 971, 61.8725};
  const std::string json = FormatProbeJson(result, context);
  const size_t jobs_end = json.rfind("]", json.find("\"disk_util\""));
  EXPECT_NE(jobs_end, std::string::npos);
  EXPECT_NE(json.find("\"disk_util\" : [\n"
                      "    {\n"
                      "      \"name\" : \"vda\",\n"
                      "      \"read_ios\" : 26467,\n"
                      "      \"write_ios\" : 7,\n"
                      "      \"read_merges\" : 0,\n"
                      "      \"write_merges\" : 2,\n"
                      "      \"read_ticks\" : 950,\n"
                      "      \"write_ticks\" : 13,\n"
                      "      \"in_queue\" : 971,\n"
                      "      \"util\" : 61.872500\n"
                      "    }\n"
                      "  ]"),
            std::string::npos)
      << json;
  EXPECT_NE(FormatProbeNormal(result, context)
                .find("\nDisk stats (read/write):\n  vda: ios=26467/7, merge=0/2, ticks=950/13, "
                      "in_queue=971, util=61.87%\n"),
            std::string::npos)
      << FormatProbeNormal(result, context);
}

TEST(ProbeNormal, EngineFallbacksGetALineEach) {
  ProbeResult result = SyntheticResult();
  const ProbeReportContext context{{}, "/var/tmp/p.dat", 254, 0, 0, std::nullopt};
  EXPECT_EQ(FormatProbeNormal(result, context).find("fallback"), std::string::npos);
  result.fallbacks = {{"registerfiles", "registering the file failed: EMFILE"}};
  EXPECT_NE(FormatProbeNormal(result, context)
                .find("\n  fallback: registerfiles: registering the file failed: EMFILE\n"),
            std::string::npos)
      << FormatProbeNormal(result, context);
}

TEST(ProbeNormal, SummaryInFioUnits) {
  const std::string text =
      FormatProbeNormal(SyntheticResult(), {{}, "/var/tmp/p.dat", 254, 0, 0, std::nullopt});
  EXPECT_NE(text.find("read: IOPS=500, BW=2000KiB/s"), std::string::npos) << text;
  EXPECT_NE(text.find("clat (usec): min=50, max=150"), std::string::npos) << text;
  EXPECT_NE(text.find("clat percentiles (usec)"), std::string::npos) << text;
  EXPECT_NE(text.find("cpu: usr=5.00%, sys=25.00%, ctx=10"), std::string::npos) << text;
  EXPECT_EQ(text.find("write:"), std::string::npos) << text;
}

// A job file's section names the job, and the target and
// the disk are named by whoever made them: printed escaped, JSON as JSON.
TEST(ProbeNormal, NamesArePrintedEscaped) {
  ProbeResult result = SyntheticResult();
  result.spec.name = "job\x1b]0;PWNED\a";
  result.end = probes::RunEnd::kFailed;
  result.error = Error::Io("read: Input/output error", "/srv/t\x1b[2J", 5);
  ProbeReportContext context{{}, "/srv/t\x1b[2J", 254, 0, 0, std::nullopt};
  context.disk_util = collectors::DiskUtil{"vd\x1b[2J", 1, 0, 0, 0, 1, 0, 1, 1.0};
  const std::string text = FormatProbeNormal(result, context);
  EXPECT_TRUE(text.starts_with("job\\x1b]0;PWNED\\x07: (groupid=0")) << text;
  EXPECT_NE(text.find("direct=0: /srv/t\\x1b[2J (254:0): failed\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  error: /srv/t\\x1b[2J: read: Input/output error\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  vd\\x1b[2J: ios=1/0"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find('\a'), std::string::npos) << text;
  EXPECT_NE(FormatProbeJson(result, context).find(R"("jobname" : "job\u001b]0;PWNED\u0007")"),
            std::string::npos)
      << FormatProbeJson(result, context);
}

TEST(ProbeProgress, OneLineWithRatesPercentAndEtaRoundedUp) {
  probes::RunProgress p;
  p.fraction_done = 0.5;
  p.read_iops = 8321;
  p.read_bytes_per_second = 8321.0 * 4096;
  p.eta = std::chrono::milliseconds(999);
  EXPECT_EQ(FormatProgressLine(p), "[r=32.5MiB/s,w=0B/s][r=8321,w=0 IOPS][50.0%][eta 00m:01s]");
  p.ramping = true;
  p.eta = std::chrono::seconds(61);
  EXPECT_EQ(FormatProgressLine(p),
            "[r=32.5MiB/s,w=0B/s][r=8321,w=0 IOPS][50.0% ramp][eta 01m:01s]");
}

TEST(ProbeHumanUnits, IopsAndBandwidth) {
  EXPECT_EQ(FormatIops(4440.4), "4440");
  EXPECT_EQ(FormatIops(12345), "12.3k");
  EXPECT_EQ(FormatBandwidth(18188531), "17.3MiB/s");
  EXPECT_EQ(FormatBandwidth(512), "512B/s");
}

}  // namespace
}  // namespace iowatch::daemon
