// Sweeps: the grid's points and each point's job, the budget rule, what a
// point measures from a result, the findings on a made-up device whose
// figures are known, and the JSON a sweep is printed, stored and compared as.
#include <gtest/gtest.h>

#include <algorithm>

#include "probes/sweep/sweep_findings.h"
#include "probes/sweep/sweep_plan.h"
#include "probes/sweep/sweep_report.h"

namespace iowatch::probes {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(SweepPlanTest, TheDefaultGridAndItsOrder) {
  const SweepGrid grid;
  const auto points = SweepPoints(grid);
  EXPECT_EQ(points.size(),
            6u * 7 * 2 * 2 * 2);  // bs 4k..4m by 4, QD 1..64 by 2, r/w, rand/seq, 2 modes
  EXPECT_EQ(points.front(), (SweepPoint{SweepMode::kDirect, false, true, 4096, 1}));
  EXPECT_EQ(points[1], (SweepPoint{SweepMode::kDirect, false, true, 4096, 2}));
  EXPECT_EQ(points.back(), (SweepPoint{SweepMode::kBuffered, true, false, 4 << 20, 64}));
  EXPECT_EQ(*PointRuntime(grid), milliseconds(600'000 / 336));
}

TEST(SweepPlanTest, ABudgetTooSmallSaysWhatWouldDo) {
  SweepGrid grid;
  grid.budget = seconds(60);  // 336 points: 178 ms each
  const auto runtime = PointRuntime(grid);
  ASSERT_FALSE(runtime);
  EXPECT_EQ(runtime.error().message,
            "--budget: 336 points get 178 ms each, less than 200 ms; give --budget=68s or fewer "
            "points");
  grid.depths.clear();
  EXPECT_NE(PointRuntime(grid).error().message.find("the grid is empty"), std::string::npos);
}

TEST(SweepPlanTest, EachPointIsAJobOnTheBaseTarget) {
  JobSpec base;
  base.directory = "/srv";
  base.size = 1 << 30;
  base.engine = EngineKind::kLibaio;
  const JobSpec spec =
      PointSpec(base, {SweepMode::kBuffered, true, false, 1 << 20, 8}, milliseconds(500));
  EXPECT_EQ(spec.TargetPath(), base.TargetPath());  // every point on the one file
  EXPECT_EQ(PointName({SweepMode::kBuffered, true, false, 1 << 20, 8}), "buffered-seqwrite-1m-qd8");
  EXPECT_EQ(spec.rw, RwMode::kWrite);
  EXPECT_EQ(spec.block_size, 1u << 20);
  EXPECT_EQ(spec.iodepth, 8u);
  EXPECT_FALSE(spec.direct);
  EXPECT_TRUE(spec.time_based);
  EXPECT_EQ(spec.runtime, milliseconds(500));
  EXPECT_EQ(spec.engine, EngineKind::kLibaio);
  EXPECT_EQ(spec.directory, "/srv");
  EXPECT_TRUE(ValidateJobSpec(spec));
  EXPECT_TRUE(PointSpec(base, {SweepMode::kRaw, false, true, 4096, 1}, milliseconds(500)).direct);
  EXPECT_EQ(SizeText(16384), "16k");
  EXPECT_EQ(SizeText(4 << 20), "4m");
}

TEST(SweepPlanTest, MeasureOfAResult) {
  ProbeResult r;
  r.read.ios = 1000;
  r.read.bytes = 1000 * 4096;
  r.read.runtime = seconds(1);
  for (int i = 0; i < 1000; ++i) {
    r.read.clat_histogram.Record(i < 990 ? 1'000 : 5'000'000);  // done inside the submission
    r.read.lat_histogram.Record(i < 990 ? 91'000 : 5'090'000);  // after 90 µs of it
  }
  r.elapsed = seconds(1);
  r.cpu.user_seconds = 0.1;
  r.cpu.system_seconds = 0.15;
  const SweepMeasure m = MeasureOf(r, false);
  EXPECT_DOUBLE_EQ(m.iops, 1000);
  EXPECT_DOUBLE_EQ(m.bytes_per_second, 4096000);
  EXPECT_NEAR(static_cast<double>(m.clat_p50_ns), 1'000, 10);
  EXPECT_NEAR(static_cast<double>(m.clat_p99_ns), 1'000, 10);  // 990 of 1000 at 1 µs
  EXPECT_NEAR(static_cast<double>(m.lat_p50_ns), 91'000, 1000);
  EXPECT_NEAR(static_cast<double>(m.lat_p99_ns), 91'000, 1000);
  EXPECT_EQ(m.P99(SweepLatency::kLat), m.lat_p99_ns);
  EXPECT_EQ(m.P99(SweepLatency::kClat), m.clat_p99_ns);
  EXPECT_DOUBLE_EQ(m.cpu_percent, 25);
  EXPECT_DOUBLE_EQ(m.cpu_seconds_per_gib, 0.25 / (4096000.0 / (1 << 30)));
}

// A made-up device: bandwidth min(bs × depth × 10 000, 800 MiB/s) direct,
// twice that buffered at twice the CPU; p99 grows with depth.
std::vector<SweepSample> MadeUpDevice() {
  std::vector<SweepSample> samples;
  for (const SweepMode mode : {SweepMode::kDirect, SweepMode::kBuffered}) {
    for (const uint64_t bs : {4096u, 65536u, 1u << 20}) {
      for (const uint32_t depth : {1u, 4u, 16u}) {
        const double cap = 800.0 * (1 << 20);
        double bw = std::min(static_cast<double>(bs) * depth * 10'000, cap);
        SweepMeasure m;
        m.bytes_per_second = mode == SweepMode::kBuffered ? 2 * bw : bw;
        m.iops = m.bytes_per_second / static_cast<double>(bs);
        m.lat_p99_ns = depth == 1 ? 100'000 : depth == 4 ? 150'000 : 1'000'000;
        m.clat_p99_ns = 1'000;  // completed inside the submission: clat says nothing
        m.cpu_seconds_per_gib = mode == SweepMode::kBuffered ? 0.4 : 0.2;
        samples.push_back({{mode, false, true, bs, depth}, m});
      }
    }
  }
  return samples;
}

TEST(SweepFindingsTest, KneeLatencyOptimalDepthAndBufferedVsDirect) {
  const auto samples = MadeUpDevice();
  const auto findings = SweepFindings(samples);
  ASSERT_EQ(findings.size(), 5u);  // knee and depth per mode, one buffered-vs-direct
  const auto find = [&](std::string_view kind, SweepMode mode) {
    const auto it = std::ranges::find_if(
        findings, [&](const SweepFinding& f) { return f.kind == kind && f.point.mode == mode; });
    return it == findings.end() ? SweepFinding{} : *it;
  };
  const SweepFinding knee = find("knee", SweepMode::kDirect);
  EXPECT_EQ(knee.kind, "knee");
  // 64k × 4 × 10 000 = 2.4 GiB/s > 800 MiB/s: the smallest bs, then depth, at the cap.
  EXPECT_EQ(knee.point.block_size, 65536u);
  EXPECT_EQ(knee.point.iodepth, 4u);
  EXPECT_DOUBLE_EQ(knee.ratio, 1.0);
  const SweepFinding depth = find("latency_optimal_depth", SweepMode::kDirect);
  EXPECT_EQ(depth.kind, "latency_optimal_depth");
  // 4k: IOPS 10k, 40k, 160k at p99 100, 150, 1000 µs: 40k/150 is the best.
  EXPECT_EQ(depth.point.block_size, 4096u);
  EXPECT_EQ(depth.point.iodepth, 4u);
  EXPECT_NE(depth.text.find("QD4 gives 40000 IOPS at lat p99 150.0 µs; QD16 adds +300 % IOPS "
                            "for 6.7× the p99"),
            std::string::npos)
      << depth.text;
  const SweepFinding buffered = find("buffered_vs_direct", SweepMode::kBuffered);
  EXPECT_EQ(buffered.kind, "buffered_vs_direct");
  EXPECT_DOUBLE_EQ(buffered.value, 2.0);
  EXPECT_DOUBLE_EQ(buffered.ratio, 2.0);
  EXPECT_NE(buffered.text.find("at 9 of 9 points"), std::string::npos) << buffered.text;
}

// Judged on clat, which is flat where the device completes
// inside the submission, the deepest queue looked free.
TEST(SweepFindingsTest, TheLatencyOptimalDepthOnClatOnlyWhenAsked) {
  const auto samples = MadeUpDevice();
  const auto findings = SweepFindings(samples, SweepLatency::kClat);
  const auto it = std::ranges::find_if(findings, [](const SweepFinding& f) {
    return f.kind == "latency_optimal_depth" && f.point.mode == SweepMode::kDirect;
  });
  ASSERT_NE(it, findings.end());
  EXPECT_EQ(it->point.iodepth, 16u);
  EXPECT_NE(it->text.find("at clat p99 1.0 µs"), std::string::npos) << it->text;
}

TEST(SweepReportTest, JsonRoundTripAndComparison) {
  SweepReport a;
  a.started_unix_ms = 1'700'000'000'000;
  a.target = "/srv/sweep.0.0";
  a.device = "nvme0n1";
  a.identity = "Model X S123";
  a.engine = "io_uring";
  a.size = 1 << 30;
  a.budget_ms = 600'000;
  a.point_runtime_ms = 1785;
  a.samples = MadeUpDevice();
  a.findings = SweepFindings(a.samples);
  const auto back = ParseSweepJson(SweepJson(a));
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->identity, "Model X S123");
  ASSERT_EQ(back->samples.size(), a.samples.size());
  EXPECT_EQ(back->samples[5].point, a.samples[5].point);
  EXPECT_EQ(back->samples[5].measure.clat_p99_ns, a.samples[5].measure.clat_p99_ns);
  EXPECT_EQ(back->samples[5].measure.lat_p99_ns, a.samples[5].measure.lat_p99_ns);
  EXPECT_EQ(back->latency, SweepLatency::kLat);
  EXPECT_EQ(back->findings.size(), a.findings.size());
  EXPECT_EQ(back->findings[0].text, a.findings[0].text);

  SweepReport b = a;
  for (SweepSample& s : b.samples) s.measure.bytes_per_second *= 0.5;  // after a bad firmware
  const std::string compared = CompareSweeps(a, b);
  EXPECT_NE(compared.find("18 points in both; median B/A: bandwidth 0.50, lat p99 1.00"),
            std::string::npos)
      << compared;

  // A sweep stored before lat was kept: clat only, its findings on clat.
  std::string old = SweepJson(a);
  for (const std::string_view key : {"\"lat_p50_ns\"", "\"lat_p99_ns\"", "\"latency\""}) {
    for (size_t at = old.find(key); at != std::string::npos; at = old.find(key)) {
      old.erase(at, old.find('\n', at) - at + 1);
    }
  }
  const auto before = ParseSweepJson(old);
  ASSERT_TRUE(before) << before.error().ToString();
  EXPECT_EQ(before->latency, SweepLatency::kClat);
  EXPECT_EQ(before->samples[5].measure.lat_p99_ns, 0u);
  const std::string mixed = CompareSweeps(*before, b);
  EXPECT_NE(mixed.find("median B/A: bandwidth 0.50, lat p99 0.00"), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("A lat p99 µs"), std::string::npos) << mixed;

  EXPECT_FALSE(ParseSweepJson("{}"));
  EXPECT_FALSE(ParseSweepJson("not json"));
  const auto wrong = ParseSweepJson(R"({"iowatch_sweep": 2})");
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.error().message.find("format 1"), std::string::npos);
}

// A target path of Latin-1 bytes: `iowatch sweep -o json` died in dump()
// ("invalid UTF-8 byte") after the whole sweep had run.
TEST(SweepReportTest, NamesThatAreNotUtf8BecomeReplacementCharacters) {
  SweepReport a;
  a.target = "/srv/caf\xe9/sweep.0.0";
  a.device = "sd\xff";
  const auto back = ParseSweepJson(SweepJson(a));
  ASSERT_TRUE(back) << back.error().ToString();
  EXPECT_EQ(back->target, "/srv/caf\xEF\xBF\xBD/sweep.0.0");
  EXPECT_EQ(back->device, "sd\xEF\xBF\xBD");
}

// libFuzzer's find (tests/fuzz/seeds/fuzz_probe_wire/sweep-size-float-1e126.json): a float
// where an integer belongs was converted without a range check (undefined behaviour).
TEST(SweepReportTest, AFloatOrANegativeWhereACountBelongsIsAnError) {
  SweepReport a;
  a.size = 4096;
  std::string text = SweepJson(a);
  for (const char* bad : {"1.07e126", "-1", "4096.5", "\"4096\""}) {
    std::string damaged = text;
    damaged.replace(damaged.find("\"size\": 4096"), 13, std::string("\"size\": ") + bad);
    const auto parsed = ParseSweepJson(damaged);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_NE(parsed.error().message.find("a sweep's JSON"), std::string::npos);
  }
  EXPECT_TRUE(ParseSweepJson(text));
}

}  // namespace
}  // namespace iowatch::probes
