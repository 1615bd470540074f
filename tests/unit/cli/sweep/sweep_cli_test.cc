// `iowatch sweep`'s command line (the grid as lists read as `iowatch probe`
// reads sizes and depths, the budget rule, what the grid owns) and its
// table and SVG (every point and finding in the table; the chart a
// well-formed, self-contained SVG with a line per depth).
#include <gtest/gtest.h>

#include <regex>

#include "cli/sweep/sweep_options.h"
#include "cli/sweep/sweep_output.h"

namespace iowatch::daemon {
namespace {

TEST(SweepArgs, TheGridAsLists) {
  const auto o =
      ParseSweepArgs({"--directory=/srv", "--bs=4k,64KiB,1m", "--iodepth=1,32", "--rw=read",
                      "--pattern=sequential,random", "--mode=direct,buffered,raw", "--budget=5m",
                      "-o", "json", "--ioengine=libaio", "--svg=/tmp/x.svg", "--no-store"});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->grid.block_sizes, (std::vector<uint64_t>{4096, 64000, 1 << 20}));
  EXPECT_EQ(o->grid.depths, (std::vector<uint32_t>{1, 32}));
  EXPECT_EQ(o->grid.writes, (std::vector<bool>{false}));
  EXPECT_EQ(o->grid.randoms, (std::vector<bool>{false, true}));
  EXPECT_EQ(o->grid.modes.size(), 3u);
  EXPECT_EQ(o->grid.budget, std::chrono::minutes(5));
  EXPECT_EQ(o->output, SweepOutput::kJson);
  EXPECT_EQ(o->base.engine, probes::EngineKind::kLibaio);
  EXPECT_EQ(o->base.size, 1u << 30);  // the default size under a directory
  EXPECT_EQ(o->base.TargetPath(), "/srv/sweep.0.0");
  EXPECT_FALSE(o->store);
  EXPECT_EQ(o->svg_file, "/tmp/x.svg");
  EXPECT_EQ(o->latency, probes::SweepLatency::kLat);  // fio's lat unless asked
  const auto clat = ParseSweepArgs({"--directory=/srv", "--latency=clat"});
  ASSERT_TRUE(clat) << clat.error().ToString();
  EXPECT_EQ(clat->latency, probes::SweepLatency::kClat);
  EXPECT_EQ(ParseSweepArgs({"--directory=/srv", "--latency=slat"}).error().message,
            "--latency: expected a list of lat, clat, found \"slat\"");
}

TEST(SweepArgs, ErrorsSayWhatIsExpected) {
  const auto message = [](std::vector<std::string> args) {
    const auto o = ParseSweepArgs(args);
    return o ? std::string("(accepted)") : o.error().message;
  };
  EXPECT_EQ(message({"--directory=/srv", "--bs=4q"}),
            "--bs: expected a size such as \"4k\", \"64KiB\" or \"1m\", found \"4q\"");
  EXPECT_EQ(message({"--directory=/srv", "--rw=sideways"}),
            "--rw: expected a list of read, write, found \"sideways\"");
  EXPECT_EQ(message({"--directory=/srv", "--direct=1"}),
            "--direct: set by the sweep for each point (the grid: --bs, --iodepth, --rw, "
            "--pattern, --mode, --budget)");
  EXPECT_NE(message({"--directory=/srv", "--budget=10s"}).find("give --budget=68s"),
            std::string::npos);
  EXPECT_EQ(message({"--bs=4k"}), "filename or directory is required");
  EXPECT_EQ(message({"--compare", "1"}), "--compare: expected two sweep ids");
  EXPECT_NE(message({"--compare", "1", "x"}).find("expected two sweep ids"), std::string::npos);
  const auto compare = ParseSweepArgs({"--compare", "3", "7", "--state.dir=/s"});
  ASSERT_TRUE(compare);
  EXPECT_EQ(compare->compare, (std::pair<int64_t, int64_t>{3, 7}));
  EXPECT_EQ(compare->state_dir, "/s");
}

probes::SweepReport SmallReport() {
  probes::SweepReport r;
  r.target = "/srv/<odd & name>/sweep.0.0";
  r.device = "sda";
  r.identity = "Model S1";
  r.engine = "io_uring";
  r.point_runtime_ms = 500;
  for (const uint32_t depth : {1u, 8u}) {
    for (const uint64_t bs : {4096u, 1u << 20}) {
      probes::SweepMeasure m;
      m.bytes_per_second = static_cast<double>(bs) * depth * 1000;
      m.iops = 1000.0 * depth;
      // This VM's disk at 64 KiB: clat ~1 µs, the 90 µs spent in the submission.
      m.clat_p50_ns = 1'000;
      m.clat_p99_ns = 1'200;
      m.lat_p50_ns = 91'000 * depth;
      m.lat_p99_ns = 150'000 * depth;
      r.samples.push_back({{probes::SweepMode::kDirect, false, true, bs, depth}, m});
    }
  }
  r.findings = probes::SweepFindings(r.samples);
  return r;
}

// The table showed clat, so a device completing inside
// the submission read "64 KiB random reads take 1 µs". Total latency (fio's
// lat) by default, clat when asked, the column saying which.
TEST(SweepOutputTest, TheTableHasEveryPointAndFindingWithTotalLatency) {
  probes::SweepReport r = SmallReport();
  std::string table = SweepTable(r);
  EXPECT_NE(table.find("IOPS   bandwidth  lat p50 µs  lat p99 µs  CPU %"), std::string::npos)
      << table;
  EXPECT_NE(table.find("direct    randread      1m    8       8000   7.8 GiB/s       728.0      "
                       "1200.0"),
            std::string::npos)
      << table;
  for (const probes::SweepFinding& f : r.findings) {
    EXPECT_NE(table.find(f.text), std::string::npos) << f.text;
  }
  r.latency = probes::SweepLatency::kClat;
  table = SweepTable(r);
  EXPECT_NE(table.find("clat p50 µs clat p99 µs"), std::string::npos) << table;
  EXPECT_NE(table.find("7.8 GiB/s         1.0         1.2"), std::string::npos) << table;
}

size_t Count(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return static_cast<size_t>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

TEST(SweepOutputTest, TheChartIsSelfContainedWithALinePerDepthAndPanel) {
  const std::string svg = SweepSvg(SmallReport());
  EXPECT_TRUE(svg.starts_with("<?xml"));
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  const std::regex polyline("<polyline ");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(svg.begin(), svg.end(), polyline), std::sregex_iterator()),
      4);  // two depths × bandwidth and p99
  EXPECT_NE(svg.find("/srv/&lt;odd &amp; name&gt;/"), std::string::npos);  // escaped
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos);
  EXPECT_NE(svg.find("direct randread: lat p99 µs against bs"), std::string::npos);
}

// The chart had no legend, no point markers, and ticks at quarters of
// 1.05 × the peak (e.g. 2100.0 MiB/s).
TEST(SweepOutputTest, TheChartHasALegendPointMarkersAndRoundTicks) {
  const std::string svg = SweepSvg(SmallReport());
  // A dot per point in each panel (2 bs × 2 depths × 2) and one per legend entry.
  EXPECT_EQ(Count(svg, "<circle "), 10u);
  EXPECT_EQ(Count(svg, ">iodepth</text>"), 1u);
  EXPECT_EQ(Count(svg, ">QD1</text>"), 1u);
  EXPECT_EQ(Count(svg, ">QD8</text>"), 1u);
  // Bandwidth peaks at 8000 MiB/s: ticks every 2000 up to 8000. Latency: decades.
  for (const char* tick :
       {">0</text>", ">2000</text>", ">4000</text>", ">6000</text>", ">8000</text>", ">1</text>",
        ">10</text>", ">100</text>", ">1000</text>", ">10000</text>"}) {
    EXPECT_EQ(Count(svg, tick), 1u) << tick << "\n" << svg;
  }
  EXPECT_EQ(Count(svg, ">[0-9]+\\.[0-9]+</text>"), 0u) << "every tick round";
}

}  // namespace
}  // namespace iowatch::daemon
