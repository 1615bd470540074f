// iowatch against node_exporter on node_exporter's own diskstats fixture
// (tests/fixtures/node-exporter: its proc tree, which has no uptime, and the
// node_disk_* lines its end-to-end test expects): the same devices, the same
// counters with the same values under our prefix, and, as there, no discard
// series for a device whose line has no discard fields, no flush series for
// one without flush fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>

#include "daemon/metrics/metrics_renderer.h"
#include "daemon/sources/sampler.h"
#include "tests/unit/daemon/sources/test_sampler_options.h"
#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

const std::string kNodeExporterDir = iowatch::testing::FixturesDir() + "/node-exporter";

// node_exporter's default --collector.diskstats.device-exclude; it exports partitions.
constexpr const char* kNodeExporterExclude =
    "^(z?ram|loop|fd|(h|s|v|xv)d[a-z]|nvme\\d+n\\d+p)\\d+$";

// The raw diskstats families by node_exporter's name, and the factor that
// turns ours into theirs (discards: we export bytes, they sectors).
const std::map<std::string, std::pair<std::string, double>> kRawFamilies = {
    {"iowatch_disk_reads_completed_total", {"node_disk_reads_completed_total", 1}},
    {"iowatch_disk_reads_merged_total", {"node_disk_reads_merged_total", 1}},
    {"iowatch_disk_read_bytes_total", {"node_disk_read_bytes_total", 1}},
    {"iowatch_disk_read_time_seconds_total", {"node_disk_read_time_seconds_total", 1}},
    {"iowatch_disk_writes_completed_total", {"node_disk_writes_completed_total", 1}},
    {"iowatch_disk_writes_merged_total", {"node_disk_writes_merged_total", 1}},
    {"iowatch_disk_written_bytes_total", {"node_disk_written_bytes_total", 1}},
    {"iowatch_disk_write_time_seconds_total", {"node_disk_write_time_seconds_total", 1}},
    {"iowatch_disk_io_now", {"node_disk_io_now", 1}},
    {"iowatch_disk_io_time_seconds_total", {"node_disk_io_time_seconds_total", 1}},
    {"iowatch_disk_io_time_weighted_seconds_total",
     {"node_disk_io_time_weighted_seconds_total", 1}},
    {"iowatch_disk_discards_completed_total", {"node_disk_discards_completed_total", 1}},
    {"iowatch_disk_discards_merged_total", {"node_disk_discards_merged_total", 1}},
    {"iowatch_disk_discarded_bytes_total", {"node_disk_discarded_sectors_total", 1.0 / 512}},
    {"iowatch_disk_discard_time_seconds_total", {"node_disk_discard_time_seconds_total", 1}},
    {"iowatch_disk_flush_requests_total", {"node_disk_flush_requests_total", 1}},
    {"iowatch_disk_flush_requests_time_seconds_total",
     {"node_disk_flush_requests_time_seconds_total", 1}},
};

// "family{device=\"sda\"} 1.5" lines -> {"family{device=\"sda\"}" -> 1.5}; with
// `rename`, only our raw families, under node_exporter's names and units.
std::map<std::string, double> Series(const std::string& text, bool rename) {
  std::map<std::string, double> series;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t brace = line.find('{');
    const size_t space = line.rfind(' ');
    if (line.empty() || line[0] == '#' || brace == std::string::npos) continue;
    std::string family = line.substr(0, brace);
    double value = std::stod(line.substr(space + 1));
    if (rename) {
      const auto found = kRawFamilies.find(family);
      if (found == kRawFamilies.end()) continue;
      family = found->second.first;
      value *= found->second.second;
    }
    series[family + line.substr(brace, space - brace)] = value;
  }
  return series;
}

SamplerOptions NodeExporterDefaults() {
  SamplerOptions options = TestSamplerOptions();
  options.partitions = true;
  options.filter = *collectors::DeviceFilter::Create("", kNodeExporterExclude);
  auto ticks = std::make_shared<double>(0);
  options.monotonic_seconds = [ticks] { return *ticks += 0.000125; };
  return options;
}

TEST(NodeExporterDiskstats, SameSeriesAndValuesAsNodeExporterWithoutUptime) {
  Sampler sampler(NodeExporterDefaults());
  const FileTree procfs(kNodeExporterDir + "/proc");
  const FileTree sysfs(kNodeExporterDir + "/sys");  // none: node_exporter's sysfs is an archive
  sampler.Collect(procfs, sysfs, 1709647629);
  const auto snapshot = sampler.Collect(procfs, sysfs, 1709647631);
  const std::string text = RenderSnapshot(*snapshot);

  const auto expected =
      Series(iowatch::testing::ReadFile(kNodeExporterDir + "/e2e-output-diskstats.txt"), false);
  ASSERT_EQ(expected.size(), 175u) << kNodeExporterDir << "/e2e-output-diskstats.txt";
  const auto actual = Series(text, true);
  for (const auto& [series, value] : expected) {
    const auto found = actual.find(series);
    if (found == actual.end()) {
      ADD_FAILURE() << "iowatch has no " << series << " (node_exporter: " << value << ")";
    } else {
      EXPECT_DOUBLE_EQ(found->second, value) << series;
    }
  }
  for (const auto& [series, value] : actual) {
    EXPECT_TRUE(expected.contains(series))
        << "iowatch exports " << series << " " << value << ", node_exporter nothing";
  }
}

TEST(NodeExporterDiskstats, WithoutUptimeTheRatesAreMissingAndTheCollectorSaysWhy) {
  Sampler sampler(NodeExporterDefaults());
  const FileTree procfs(kNodeExporterDir + "/proc");
  const FileTree sysfs(kNodeExporterDir + "/sys");
  sampler.Collect(procfs, sysfs, 1709647629);
  const auto snapshot = sampler.Collect(procfs, sysfs, 1709647631);
  const auto status = std::ranges::find(snapshot->collectors, "diskstats", &CollectorStatus::name);
  ASSERT_NE(status, snapshot->collectors.end());
  EXPECT_FALSE(status->success);
  EXPECT_NE(status->error.find(kNodeExporterDir + "/proc/uptime"), std::string::npos)
      << status->error;
  ASSERT_EQ(snapshot->devices.size(), 15u);
  for (const DeviceSnapshot& d : snapshot->devices) EXPECT_FALSE(d.has_rates) << d.name;
  const std::string text = RenderSnapshot(*snapshot);
  EXPECT_EQ(text.find("iowatch_iostat_"), std::string::npos);
  EXPECT_NE(text.find("iowatch_collector_success{collector=\"diskstats\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("iowatch_disk_reads_completed_total{device=\"sdc\"} 126552\n"),
            std::string::npos);
}

}  // namespace
}  // namespace iowatch::daemon
