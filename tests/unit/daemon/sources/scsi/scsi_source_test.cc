// The scsi source through the Sampler, on a tree written by the test: a
// disk's 32-bit command counters extended past their wrap, and a disk
// swapped for another under the same name (same kernel name, same device
// number, diskstats lines alike) starting from its own counters, not
// 2^32 above the old disk's.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/config.h"
#include "daemon/sources/registry.h"
#include "daemon/sources/sampler.h"
#include "tests/unit/daemon/sources/test_sampler_options.h"
#include "tests/unit/test_files.h"

namespace iowatch::daemon {
namespace {

using iowatch::testing::TempDir;

class ScsiSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    Write("proc/diskstats", "   8       0 sda 10 0 80 5 0 0 0 0 0 5 5 0 0 0 0 0 0\n");
    Write("sys/block/sda/dev", "8:0\n");
    Write("sys/block/sda/stat", "10 0 80 5 0 0 0 0 0 5 5 0 0 0 0 0 0\n");
    Write("sys/block/sda/device/modalias", "scsi:t-0x00\n");
    Write("sys/block/sda/device/iodone_cnt", "0x0\n");
    Write("sys/block/sda/device/ioerr_cnt", "0x0\n");
  }

  void Write(const std::string& relative, const std::string& text) {
    const std::filesystem::path path = dir_.path() / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

  // One sample, at uptime `uptime_s`, with the disk's diskseq (none: a
  // kernel before 5.15) and its iorequest_cnt as sysfs prints it; the
  // extended count of commands.
  uint64_t Commands(int uptime_s, std::optional<int> diskseq, const std::string& iorequest_cnt) {
    Write("proc/uptime", std::to_string(uptime_s) + ".00 0.00\n");
    if (diskseq) {
      Write("sys/block/sda/diskseq", std::to_string(*diskseq) + "\n");
    } else {
      std::filesystem::remove(dir_.path() / "sys/block/sda/diskseq");
    }
    Write("sys/block/sda/device/iorequest_cnt", iorequest_cnt + "\n");
    const auto snapshot = sampler_.Collect(FileTree(dir_.File("proc")), FileTree(dir_.File("sys")),
                                           1709647629 + uptime_s);
    const auto& disks = snapshot->scsi.devices;
    const auto sda = std::ranges::find(disks, "sda", &ScsiSeries::device);
    if (sda == disks.end()) {
      ADD_FAILURE() << "no SCSI series for sda in " << dir_.File("sys/block/sda/device");
      return 0;
    }
    return sda->requests;
  }

  TempDir dir_;
  Sampler sampler_{TestSamplerOptions()};
};

TEST_F(ScsiSourceTest, TheSameDiskWrapsPast32Bits) {
  EXPECT_EQ(Commands(100, 5, "0xfffffff0"), 0xfffffff0u);
  EXPECT_EQ(Commands(101, 5, "0x32"), 0x100000032u);  // 0x42 commands later
}

TEST_F(ScsiSourceTest, ADiskSwappedBetweenTwoSamplesStartsFromItsOwnCounters) {
  EXPECT_EQ(Commands(100, 5, "0xf4240"), 1000000u);
  EXPECT_EQ(Commands(101, 9, "0x32"), 50u);  // not 2^32 + 50: another disk
  EXPECT_EQ(Commands(102, 9, "0x64"), 100u);
}

TEST_F(ScsiSourceTest, AnotherDiskOnAKernelWithoutDiskseqIsToldByItsWwid) {
  Write("sys/block/sda/device/wwid", "naa.5000c500a1b2c3d4\n");
  EXPECT_EQ(Commands(100, std::nullopt, "0xf4240"), 1000000u);
  // A new wwid is seen when the devices are discovered again: here another
  // device's line appears in diskstats in the same interval.
  Write("sys/block/sda/device/wwid", "naa.5000c500ffffffff\n");
  Write("proc/diskstats",
        "   8       0 sda 10 0 80 5 0 0 0 0 0 5 5 0 0 0 0 0 0\n"
        "   8      16 sdb 10 0 80 5 0 0 0 0 0 5 5 0 0 0 0 0 0\n");
  Write("sys/block/sdb/dev", "8:16\n");
  Write("sys/block/sdb/stat", "10 0 80 5 0 0 0 0 0 5 5 0 0 0 0 0 0\n");
  EXPECT_EQ(Commands(101, std::nullopt, "0x32"), 50u);
}

// collectors.scsi.enabled, a key the source declares in its folder: read by
// the config loader with the registry's settings, and `false` keeps the
// source from reading or reporting anything.
TEST_F(ScsiSourceTest, TheSwitchInTheConfigTurnsTheSourceOff) {
  Write("proc/uptime", "100.00 0.00\n");
  Write("sys/block/sda/device/iorequest_cnt", "0x10\n");
  const auto off = config::ParseConfig("collectors:\n  scsi:\n    enabled: false\n", "t.yaml",
                                       RegisteredSettings());
  ASSERT_TRUE(off.has_value()) << off.error().ToString();
  for (const bool enabled : {true, false}) {
    SamplerOptions options = TestSamplerOptions();
    if (!enabled) options.settings = off->settings;
    Sampler sampler(std::move(options));
    const auto snapshot =
        sampler.Collect(FileTree(dir_.File("proc")), FileTree(dir_.File("sys")), 1709647729);
    EXPECT_EQ(snapshot->scsi.devices.size(), enabled ? 1u : 0u) << enabled;
    EXPECT_EQ(std::ranges::count(snapshot->collectors, "scsi", &CollectorStatus::name),
              enabled ? 1 : 0)
        << enabled;
  }
}

}  // namespace
}  // namespace iowatch::daemon
