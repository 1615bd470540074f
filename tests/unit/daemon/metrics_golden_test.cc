// The whole /metrics body for two fixture samples, against a golden file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "daemon/sampler.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

const std::string kDir = IOWATCH_FIXTURES_DIR "/metrics-two-samples";

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
  sampler.Collect(collectors::FileTree(kDir + "/s1/proc"), collectors::FileTree(kDir + "/s1/sys"),
                  1709647629);
  return sampler.Collect(collectors::FileTree(kDir + "/s2/proc"),
                         collectors::FileTree(kDir + "/s2/sys"), 1709647631);
}

SamplerOptions Defaults() {
  SamplerOptions options;
  options.interval_seconds = 2;
  options.filter = *collectors::DeviceFilter::Create("", "^(loop|ram|zram|fd)\\d+$");
  auto ticks = std::make_shared<double>(0);
  options.monotonic_seconds = [ticks] { return *ticks += 0.000125; };  // every read takes 125 µs
  return options;
}

TEST(MetricsGolden, SecondSampleMatchesGoldenFile) {
  const std::string actual = TwoSamples(Defaults())->Rendered();
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
  const std::string text = TwoSamples(Defaults())->Rendered();
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

TEST(MetricsGolden, FiltersDropLoopDevicesAndPartitionsByDefault) {
  const std::string text = TwoSamples(Defaults())->Rendered();
  EXPECT_EQ(text.find("device=\"loop0\""), std::string::npos);
  EXPECT_EQ(text.find("device=\"sda1\""), std::string::npos);
  SamplerOptions with_partitions = Defaults();
  with_partitions.partitions = true;
  EXPECT_NE(TwoSamples(with_partitions)->Rendered().find("device=\"sda1\""), std::string::npos);
}

}  // namespace
}  // namespace iowatch::daemon
