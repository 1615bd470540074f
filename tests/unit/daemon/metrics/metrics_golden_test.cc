// The whole /metrics body for two fixture samples, against a golden file, and
// how it is produced: in pieces that resume anywhere, families in name order,
// numbers printed as fmt's shortest form.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "daemon/exposition/exposition.h"
#include "daemon/metrics/metrics_renderer.h"
#include "daemon/metrics/passive_metrics_renderer.h"
#include "daemon/metrics/probe_metrics_renderer.h"
#include "daemon/metrics/self_metrics.h"
#include "daemon/sources/sampler.h"
#include "tests/unit/daemon/sources/fake_kmsg.h"
#include "tests/unit/daemon/sources/test_sampler_options.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

const std::string kDir = iowatch::testing::FixturesDir() + "/metrics-two-samples";

using iowatch::testing::ReadFile;

// The first differing line, with its neighbours, for a readable failure.
std::string FirstDifference(const std::string& expected, const std::string& actual) {
  std::istringstream e(expected), a(actual);
  std::string el, al;
  for (int line = 1;; ++line) {
    const bool more_e = static_cast<bool>(std::getline(e, el));
    const bool more_a = static_cast<bool>(std::getline(a, al));
    if (!more_e && !more_a) return "identical";
    if (el != al || more_e != more_a) {
      return "line " + std::to_string(line) + "\n- " + (more_e ? el : "<end>") + "\n+ " +
             (more_a ? al : "<end>");
    }
  }
}

std::shared_ptr<const Snapshot> TwoSamples(SamplerOptions options) {
  Sampler sampler(std::move(options));
  sampler.Collect(FileTree(kDir + "/s1/proc"), FileTree(kDir + "/s1/sys"), 1709647629);
  return sampler.Collect(FileTree(kDir + "/s2/proc"), FileTree(kDir + "/s2/sys"), 1709647631);
}

SamplerOptions Defaults() {
  SamplerOptions options = TestSamplerOptions();
  options.interval_seconds = 2;
  options.filter = *collectors::DeviceFilter::Create("", "^(loop|ram|zram|fd)\\d+$");
  auto ticks = std::make_shared<double>(0);
  options.monotonic_seconds = [ticks] { return *ticks += 0.000125; };  // every read takes 125 µs
  // The fixture's mount points are not this host's: statvfs is a table.
  options.filesystems.read_usage =
      [](const std::string& path) -> Result<collectors::FilesystemUsage> {
    if (path == "/")
      return collectors::FilesystemUsage{107374182400, 53687091200, 48318382080, 6553600, 6000000};
    if (path == "/run")
      return collectors::FilesystemUsage{838860800, 836763648, 836763648, 1000000, 999000};
    if (path == "/var/lib/data")
      return collectors::FilesystemUsage{1099511627776, 109951162777, 109951162777, 536870912,
                                         536000000};
    return std::unexpected(Error::NotFound("no such mount point in the test", path));
  };
  // The kernel log: two read errors on sda, the page cache's consequence, a gap, an
  // XFS shutdown and a SCSI sense report.
  iowatch::testing::FakeKmsg log;
  log.Add(7, "I/O error, dev sda, sector 5866 op 0x0:(READ) flags 0x8800 phys_seg 1 prio class 2");
  log.Add(8, "I/O error, dev sda, sector 5867 op 0x0:(READ) flags 0x8800 phys_seg 1 prio class 2");
  log.Add(11, "Buffer I/O error on dev sda, logical block 0, async page read");
  log.Add(12, "blk_print_req_error: 4 callbacks suppressed", 4);
  log.Add(13,
          "XFS (dm-0): Metadata I/O Error (0x1) detected at xfs_trans_read_buf_map+0x1e/0x20 "
          "(fs/xfs/xfs_trans_buf.c:296).  Shutting down filesystem.",
          1);
  log.Add(14, "sd 0:0:0:0: [sda] tag#5 Sense Key : Medium Error [current] ", 6);
  options.settings.Set(kKmsgEnabled, true);
  options.kmsg.open = log.Opener();
  return options;
}

TEST(MetricsGolden, SecondSampleMatchesGoldenFile) {
  const std::string actual = RenderSnapshot(*TwoSamples(Defaults()));
  const std::string golden_path = kDir + "/metrics.golden";
  if (std::getenv("IOWATCH_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(golden_path) << actual;
    GTEST_SKIP() << "rewrote " << golden_path;
  }
  const std::string expected = ReadFile(golden_path);
  EXPECT_TRUE(expected == actual) << "differs from " << golden_path << " at "
                                  << FirstDifference(expected, actual)
                                  << "\n(IOWATCH_UPDATE_GOLDEN=1 rewrites it)";
}

TEST(MetricsGolden, DerivedSeriesAgreeWithTheIostatColumns) {
  const std::string text = RenderSnapshot(*TwoSamples(Defaults()));
  // sysstat printed for sda over this interval: r/s 75.00, rkB/s 3000.00, r_await 4.00,
  // aqu-sz 1.45, %util 75.00 (tests/fixtures/iostat-two-samples/sysstat/r2_x.txt).
  EXPECT_NE(text.find("iowatch_iostat_requests_per_second{device=\"sda\",op=\"read\"} 75\n"),
            std::string::npos);
  EXPECT_NE(text.find("iowatch_iostat_bytes_per_second{device=\"sda\",op=\"read\"} 3072000\n"),
            std::string::npos);
  EXPECT_NE(text.find("iowatch_iostat_await_seconds{device=\"sda\",op=\"read\"} 0.004\n"),
            std::string::npos);
  EXPECT_NE(text.find("iowatch_iostat_queue_size{device=\"sda\"} 1.45\n"), std::string::npos);
  EXPECT_NE(text.find("iowatch_iostat_utilization_ratio{device=\"sda\"} 0.75\n"),
            std::string::npos);
}

// sdb's diskstats line has 14 fields (a kernel before 4.18): no discard or
// flush fields, so no discard or flush series, raw or derived, rather than
// zeros that would read as "no activity"; sdc's has 20 and has both.
TEST(MetricsGolden, FieldsALineDoesNotHaveAreNotExported) {
  const std::string text = RenderSnapshot(*TwoSamples(Defaults()));
  for (const char* absent : {"iowatch_disk_discards_completed_total{device=\"sdb\"}",
                             "iowatch_disk_discarded_bytes_total{device=\"sdb\"}",
                             "iowatch_disk_flush_requests_total{device=\"sdb\"}",
                             "{device=\"sdb\",op=\"discard\"}", "{device=\"sdb\",op=\"flush\"}"}) {
    EXPECT_EQ(text.find(absent), std::string::npos) << absent;
  }
  for (const char* present : {"iowatch_disk_reads_completed_total{device=\"sdb\"} 5\n",
                              "iowatch_iostat_requests_per_second{device=\"sdb\",op=\"read\"}",
                              "iowatch_disk_discards_completed_total{device=\"sdc\"} 0\n",
                              "iowatch_disk_flush_requests_total{device=\"sdc\"} 9\n",
                              "iowatch_iostat_await_seconds{device=\"sdc\",op=\"flush\"}"}) {
    EXPECT_NE(text.find(present), std::string::npos) << present;
  }
}

TEST(MetricsGolden, FiltersDropLoopDevicesAndPartitionsByDefault) {
  const std::string text = RenderSnapshot(*TwoSamples(Defaults()));
  EXPECT_EQ(text.find("device=\"loop0\""), std::string::npos);
  EXPECT_EQ(text.find("device=\"sda1\""), std::string::npos);
  SamplerOptions with_partitions = Defaults();
  with_partitions.partitions = true;
  EXPECT_NE(RenderSnapshot(*TwoSamples(with_partitions)).find("device=\"sda1\""),
            std::string::npos);
}

TEST(MetricsGolden, PiecesOfAnySizeJoinToTheWholeText) {
  const std::string whole = RenderSnapshot(*TwoSamples(Defaults()));
  for (const size_t piece_bytes : {size_t{0}, size_t{1}, size_t{100}, size_t{4096}}) {
    MetricsCursor cursor(TwoSamples(Defaults()));  // the cursor holds the only reference
    std::string joined;
    size_t pieces = 0;
    for (bool more = true; more; ++pieces) {
      std::string piece;
      more = cursor.Next(piece, piece_bytes);
      joined += piece;
    }
    EXPECT_TRUE(joined == whole) << "pieces of " << piece_bytes
                                 << " bytes: " << FirstDifference(whole, joined);
    EXPECT_GT(pieces, piece_bytes < 4096 ? 100u : 2u);
    std::string after;
    EXPECT_FALSE(cursor.Next(after, piece_bytes));
    EXPECT_EQ(after, "");
  }
}

std::vector<std::string> TypeLines(const std::string& text) {
  std::vector<std::string> names;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) names.push_back(line.substr(7, line.find(' ', 7) - 7));
  }
  return names;
}

TEST(MetricsGolden, FamiliesAreSortedAndUnique) {
  const auto table = MetricFamilyNames();
  EXPECT_TRUE(std::is_sorted(table.begin(), table.end()));
  EXPECT_EQ(std::adjacent_find(table.begin(), table.end()), table.end());
  SelfMetrics self;
  self.ConfigLoaded(true, 1709647629);
  self.SampleTaken(0.001, 0);
  std::string self_text;
  self.Render(1, self_text);
  for (const std::string& text : {RenderSnapshot(*TwoSamples(Defaults())), self_text}) {
    const auto names = TypeLines(text);
    EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
    EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  }
}

TEST(MetricsGolden, FamiliesWithoutSamplesLeaveNoTrace) {
  Sampler sampler(Defaults());
  const auto first =
      sampler.Collect(FileTree(kDir + "/s1/proc"), FileTree(kDir + "/s1/sys"), 1709647629);
  const std::string text = RenderSnapshot(*first);  // one sample: no rates yet
  EXPECT_EQ(text.find("iowatch_iostat_"), std::string::npos);
  EXPECT_EQ(text.find("iowatch_disk_counters_reset"), std::string::npos);
  EXPECT_NE(text.find("# TYPE iowatch_disk_reads_completed_total counter\n"), std::string::npos);
  EXPECT_EQ(TypeLines(text).size(),
            static_cast<size_t>(std::count(text.begin(), text.end(), '#')) / 2);
}

// The cgroup families of one sample of each fixture hierarchy (cgroup-v1: a
// hybrid host's blkio with v2 pressure; cgroup-v2: io.stat with a vanished
// device, an empty file and escaped unit names three levels down), against
// each tree's cgroup.golden (IOWATCH_UPDATE_GOLDEN=1 rewrites them).
TEST(MetricsGolden, CgroupFamiliesOfBothHierarchies) {
  for (const char* tree : {"cgroup-v1", "cgroup-v2"}) {
    const std::string dir = iowatch::testing::FixturesDir() + "/" + tree;
    SamplerOptions options = Defaults();
    options.cgroups.max_depth = 3;
    Sampler sampler(std::move(options));
    const auto snapshot =
        sampler.Collect(FileTree(dir + "/proc"), FileTree(dir + "/sys"), 1709647629);
    std::string actual;
    std::istringstream lines(RenderSnapshot(*snapshot));
    for (std::string line; std::getline(lines, line);) {
      if (line.find("iowatch_cgroup_") != std::string::npos ||
          line.find("collector=\"cgroup\"") != std::string::npos) {
        actual += line + "\n";
      }
    }
    const std::string golden_path = dir + "/cgroup.golden";
    if (std::getenv("IOWATCH_UPDATE_GOLDEN") != nullptr) {
      std::ofstream(golden_path) << actual;
      continue;
    }
    const std::string expected = ReadFile(golden_path);
    EXPECT_EQ(expected, actual) << tree << ": " << FirstDifference(expected, actual);
  }
}

// The eBPF families of one disk: cumulative buckets at the coarse bounds
// ending in _count, sums in base units, alignment only where a unit is
// known, cgroup counters labelled as the cgroup series; promtool-valid
// text is checked live by e2e.serve_bpf.
TEST(MetricsGolden, BlockIoFamiliesOfOneDisk) {
  namespace bpf = collectors::bpf;
  Snapshot s;
  s.collectors.push_back({"bpf", 0, true, 0, {}, {}});
  BlockLatencySeries latency{
      "sda", bpf::BlockOp::kRead, bpf::BlockStage::kDevice, 10, 1'500'000, {}, {}, {}};
  latency.coarse[0] = 4;   // ≤ 10 µs
  latency.coarse[6] = 5;   // ≤ 1 ms
  latency.coarse[19] = 1;  // above 10 s
  s.block_io.latency.push_back(latency);
  BlockRequestSeries requests{"sda", bpf::BlockOp::kWrite, {}};
  requests.stats.requests = 3;
  requests.stats.bytes = 3 * 4096;
  requests.stats.size_slots[3] = 3;  // (2 KiB, 4 KiB]
  requests.stats.sequential = 2;
  requests.stats.random = 1;
  s.block_io.requests.push_back(requests);
  s.block_io.cgroups.push_back(
      {"system.slice/x.service", "x.service", "sda", bpf::BlockOp::kWrite, 12288, 3});
  s.block_io.errors.push_back({"sda", "write_zeroes", "critical medium", 2});
  const std::string text = RenderSnapshot(s);
  for (const char* line : {
           "# TYPE iowatch_block_latency_seconds histogram\n",
           "iowatch_block_latency_seconds_bucket{device=\"sda\",op=\"read\",stage=\"device\","
           "le=\"1e-05\"} 4\n",
           "le=\"0.0005\"} 4\n",
           "le=\"0.001\"} 9\n",
           "le=\"10\"} 9\n",
           "le=\"+Inf\"} 10\n",
           "iowatch_block_latency_seconds_sum{device=\"sda\",op=\"read\",stage=\"device\"} "
           "0.0015\n",
           "iowatch_block_latency_seconds_count{device=\"sda\",op=\"read\",stage=\"device\"} 10\n",
           "iowatch_block_request_size_bytes_bucket{device=\"sda\",op=\"write\",le=\"2048\"} 0\n",
           "iowatch_block_request_size_bytes_bucket{device=\"sda\",op=\"write\",le=\"4096\"} 3\n",
           "iowatch_block_request_size_bytes_bucket{device=\"sda\",op=\"write\",le=\"16777216\"} "
           "3\n",
           "iowatch_block_request_size_bytes_sum{device=\"sda\",op=\"write\"} 12288\n",
           "iowatch_block_requests_by_pattern_total{device=\"sda\",op=\"write\",pattern=\"random\"}"
           " 1\n",
           "iowatch_block_cgroup_bytes_total{cgroup=\"system.slice/x.service\",unit=\"x.service\","
           "device=\"sda\",op=\"write\"} 12288\n",
           "iowatch_block_cgroup_dropped_series 0\n",
           "iowatch_block_lost_total{what=\"issue\"} 0\n",
           "iowatch_block_errors_total{device=\"sda\",error=\"critical medium\","
           "op=\"write_zeroes\"} 2\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line;
  }
  EXPECT_EQ(text.find("iowatch_block_requests_by_alignment_total"), std::string::npos);
  size_t block_samples = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    block_samples += line.starts_with("iowatch_block_");
  // One histogram each, 2 patterns, 2 cgroup counters, an error, dropped, 2 unresolved, 5 lost.
  EXPECT_EQ(block_samples, 22u + 19 + 2 + 2 + 1 + 1 + 2 + 5);
}

// docs/metrics.md is the reference: every family of the sample's block has a
// row, by its name, by its base name for a `_window_max` twin, or as the
// `…_suffix` of a row that lists a group.
TEST(MetricsGolden, EveryFamilyIsInTheReference) {
  const std::string doc = ReadFile(iowatch::testing::SourceDir() + "/docs/metrics.md");
  ASSERT_FALSE(doc.empty());
  const auto documented = [&](std::string_view name) {
    if (doc.find(fmt::format("`{}`", name)) != std::string::npos) return true;
    const size_t last = name.rfind("_seconds_total");
    const size_t cut = name.find('_', name.find('_', name.find('_') + 1) + 1);
    return last != std::string_view::npos && cut != std::string_view::npos &&
           doc.find(fmt::format("`…{}`", name.substr(cut))) != std::string::npos;
  };
  for (const std::string_view family : MetricFamilyNames()) {
    std::string_view name = family;
    if (name.ends_with("_window_max") && !documented(name)) {
      name.remove_suffix(std::string_view("_window_max").size());
      if (name.starts_with("iowatch_iostat_") || name.starts_with("iowatch_vm_")) continue;
    }
    EXPECT_TRUE(documented(name))
        << family << " has no row in docs/metrics.md (a source's: in its "
        << "daemon/sources/<name>/metrics.md, then python3 scripts/docs.py)";
  }
  for (const std::string_view family : ProbeMetricFamilyNames()) {
    EXPECT_TRUE(documented(family)) << family << " has no row in docs/metrics.md";
  }
  for (const std::string_view family : PassiveMetricFamilyNames()) {
    EXPECT_TRUE(documented(family)) << family << " has no row in docs/metrics.md";
  }
}

TEST(Exposition, NumbersPrintAsFmtsShortestForm) {
  const double values[] = {
      0,    1,      3072000,           0.004,     1.45, 5.6,      -3,     1e15,
      1e16, 1.5e16, 123456789012345.0, 0.1 + 0.2, 1e-7, 2.5e-300, 4.5e15, 9007199254740993.0,
      1e300};
  for (const double value : values) {
    std::string out;
    ExpositionWriter w(out);
    w.Family("x", "gauge", "help");
    w.Sample({}, value);
    EXPECT_EQ(out, fmt::format("# HELP x help\n# TYPE x gauge\nx {}\n", value));
  }
  std::string out;
  ExpositionWriter w(out);
  w.Family("x", "gauge", "h", /*header_written=*/true);
  w.Sample({}, -0.0);
  w.Sample({}, std::numeric_limits<double>::quiet_NaN());
  w.Sample({}, std::numeric_limits<double>::infinity());
  w.Sample({}, -std::numeric_limits<double>::infinity());
  w.SampleInt({{"a", "q\"uo\\te\nd"}}, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(out,
            "x -0\nx NaN\nx +Inf\nx -Inf\n"
            "x{a=\"q\\\"uo\\\\te\\nd\"} 18446744073709551615\n");
}

// Adversarial test: one device name or model with a byte that is
// not UTF-8 made Prometheus refuse the whole scrape ("invalid label value").
TEST(Exposition, LabelValuesAreAlwaysValidUtf8) {
  std::string out;
  ExpositionWriter w(out);
  w.Family("x", "gauge", "h", /*header_written=*/true);
  const std::string all_bad(5, '\xff');
  w.SampleInt({{"device", "sd\xff\"a"}, {"model", "caf\xc3\xa9"}, {"serial", all_bad}}, 1);
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(out, "x{device=\"sd" + fffd + "\\\"a\",model=\"caf\xc3\xa9\",serial=\"" + fffd + fffd +
                     fffd + fffd + fffd + "\"} 1\n");
}

}  // namespace
}  // namespace iowatch::daemon

namespace iowatch::daemon {
namespace {

// iowatch advise's findings in /metrics: an md RAID-5 whose 1536 KiB full
// stripe exceeds max_sectors_kb, written to in 28 KiB requests, with a
// partition at sector 63; a plain disk with nothing to say has no series.
TEST(MetricsGolden, AdviceFindingsOfAnArray) {
  Snapshot s;
  collectors::BlockDevice md;
  md.name = "md0";
  md.md = collectors::MdGeometry{"raid5", 512 * 1024, 4, 2};
  md.queue.physical_block_size = 4096;
  md.queue.max_sectors_kb = 1280;
  md.queue.max_hw_sectors_kb = 4096;
  collectors::BlockDevice part;
  part.name = "md0p1";
  part.is_partition = true;
  part.parent = "md0";
  part.start_sector = 63;
  collectors::BlockDevice plain;
  plain.name = "sda";
  plain.queue.physical_block_size = 512;
  s.block_devices = std::make_shared<const std::vector<collectors::BlockDevice>>(
      std::vector<collectors::BlockDevice>{md, part, plain});
  DeviceSnapshot counters;
  counters.name = "md0";
  counters.counters.writes = 5000;
  counters.counters.write_sectors = 5000 * 56;  // 28 KiB each
  s.devices.push_back(counters);
  const std::string text = RenderSnapshot(s);
  for (const char* line : {
           "# TYPE iowatch_advice_finding gauge\n",
           "iowatch_advice_finding{device=\"md0\",finding=\"full_stripe_over_max_sectors\","
           "severity=\"warning\"} 1\n",
           "iowatch_advice_finding{device=\"md0\",finding=\"small_writes_on_parity_raid\","
           "severity=\"warning\"} 1\n",
           "iowatch_advice_finding{device=\"md0p1\",finding=\"partition_misaligned\","
           "severity=\"critical\"} 1\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << text;
  }
  EXPECT_EQ(text.find("iowatch_advice_finding{device=\"sda\""), std::string::npos);
}

// A read copies each CPU's histogram while the program may be updating it
// (the count first, the buckets after): a bucket may then count a request
// the count does not yet. +Inf and _count are never below a finite bucket.
TEST(MetricsGolden, BlockLatencyInfIsNeverBelowAFiniteBucket) {
  namespace bpf = collectors::bpf;
  Snapshot s;
  s.collectors.push_back({"bpf", 0, true, 0, {}, {}});
  BlockLatencySeries latency{
      "sda", bpf::BlockOp::kRead, bpf::BlockStage::kTotal, 10, 1'500'000, {}, {}, {}};
  latency.coarse[0] = 8;
  latency.coarse[6] = 3;  // 11 in buckets, the count read as 10
  s.block_io.latency.push_back(latency);
  const std::string text = RenderSnapshot(s);
  for (const char* line : {
           "le=\"0.001\"} 11\n",
           "le=\"+Inf\"} 11\n",
           "iowatch_block_latency_seconds_count{device=\"sda\",op=\"read\",stage=\"total\"} 11\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << text.substr(0, 2000);
  }
}

}  // namespace
}  // namespace iowatch::daemon
