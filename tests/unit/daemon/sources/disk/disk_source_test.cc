// The disk source through the Sampler, on a tree written by the test: which
// samples have rates when /proc/uptime comes and goes, and a device number
// new under an old name (another device) starting without history.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "daemon/sampling/derived_series.h"
#include "daemon/sources/sampler.h"
#include "tests/unit/daemon/sources/test_sampler_options.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

using iowatch::testing::TempDir;

class DiskSourceTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(dir_.ok()); }

  void Write(const std::string& relative, const std::string& text) {
    const std::filesystem::path path = dir_.path() / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

  // One sample of diskstats line `line` (uptime `uptime_s`, none when
  // negative); the device's snapshot, nullopt when it has none.
  std::optional<DeviceSnapshot> Sample(int uptime_s, const std::string& line) {
    if (uptime_s >= 0) {
      Write("proc/uptime", std::to_string(uptime_s) + ".00 0.00\n");
    } else {
      std::filesystem::remove(dir_.path() / "proc/uptime");
    }
    Write("proc/diskstats", line + "\n");
    snapshot_ = sampler_.Collect(FileTree(dir_.File("proc")), FileTree(dir_.File("sys")), 1000);
    if (snapshot_->devices.size() != 1) return std::nullopt;
    return snapshot_->devices.front();
  }

  const CollectorStatus& Diskstats() const {
    return *std::ranges::find(snapshot_->collectors, "diskstats", &CollectorStatus::name);
  }

  TempDir dir_;
  Sampler sampler_{TestSamplerOptions()};
  std::shared_ptr<const Snapshot> snapshot_;
};

constexpr const char* kSdbLine1 = "   8      16 sdb 1000 0 8000 500 0 0 0 0 0 500 500";
constexpr const char* kSdbLine2 = "   8      16 sdb 1500 0 12000 750 0 0 0 0 0 750 750";

TEST_F(DiskSourceTest, CountersWithoutUptimeAndRatesOnceItIsBackForTwoSamples) {
  const auto first = Sample(-1, kSdbLine1);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->counters.reads, 1000u);
  EXPECT_FALSE(first->has_rates);
  EXPECT_FALSE(Diskstats().success);
  EXPECT_NE(Diskstats().error.find(dir_.File("proc/uptime")), std::string::npos)
      << Diskstats().error;
  const auto second = Sample(100, kSdbLine2);  // no interval yet: the last sample had no clock
  ASSERT_TRUE(second);
  EXPECT_FALSE(second->has_rates);
  EXPECT_TRUE(Diskstats().success) << Diskstats().error;
  const auto third = Sample(102, "   8      16 sdb 1700 0 12000 750 0 0 0 0 0 750 750");
  ASSERT_TRUE(third);
  ASSERT_TRUE(third->has_rates);
  EXPECT_DOUBLE_EQ(third->latest[IostatColumnIndex("r/s")], 100);
}

TEST_F(DiskSourceTest, ANewDeviceNumberUnderTheSameNameStartsWithoutHistory) {
  ASSERT_TRUE(Sample(100, kSdbLine1));
  const auto other = Sample(101, "   8      32 sdb 1500 0 12000 750 0 0 0 0 0 750 750");
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->has_rates) << "rates against another device's counters";
  const auto next = Sample(102, "   8      32 sdb 1600 0 12000 750 0 0 0 0 0 750 750");
  ASSERT_TRUE(next);
  ASSERT_TRUE(next->has_rates);
  EXPECT_DOUBLE_EQ(next->latest[IostatColumnIndex("r/s")], 100);
}

}  // namespace
}  // namespace iowatch::daemon
