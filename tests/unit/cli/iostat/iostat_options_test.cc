// The sysstat-style command line of `iowatch iostat`.
#include "cli/iostat/iostat_options.h"

#include <gtest/gtest.h>

namespace iowatch::daemon {
namespace {

TEST(ParseIostatArgs, EverydayOptionsAndPositionals) {
  const auto o =
      ParseIostatArgs({"-xzt", "-k", "-N", "-y", "-o", "JSON", "sda", "/dev/nvme0n1", "2", "5"});
  ASSERT_TRUE(o.has_value()) << o.error().ToString();
  EXPECT_TRUE(o->extended && o->omit_inactive && o->timestamp && o->dm_names && o->skip_since_boot);
  EXPECT_TRUE(o->json);
  EXPECT_EQ(o->unit, SizeUnit::kKilobytes);
  EXPECT_EQ(o->devices, (std::vector<std::string>{"sda", "nvme0n1"}));
  EXPECT_EQ(o->interval_s, 2);
  EXPECT_EQ(o->count, 5);
  EXPECT_TRUE(o->show_cpu && o->show_devices);
}

TEST(ParseIostatArgs, DashPTakesAListOnlyWhenNextArgumentIsNotANumberOrOption) {
  auto o = ParseIostatArgs({"-p", "sda,sdb", "1"});
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->partition_devices, (std::vector<std::string>{"sda", "sdb"}));
  EXPECT_EQ(o->interval_s, 1);
  o = ParseIostatArgs({"-p", "1"});
  ASSERT_TRUE(o.has_value());
  EXPECT_TRUE(o->partitions && !o->partitions_all && o->partition_devices.empty());
  EXPECT_EQ(o->interval_s, 1);
  o = ParseIostatArgs({"-p", "ALL", "-x"});
  ASSERT_TRUE(o.has_value());
  EXPECT_TRUE(o->partitions_all && o->extended);
}

TEST(ParseIostatArgs, DevicesMayFollowTheIntervalAsInSysstat) {
  const auto o = ParseIostatArgs({"-x", "1", "3", "sda"});
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->devices, (std::vector<std::string>{"sda"}));
  EXPECT_EQ(o->interval_s, 1);
  EXPECT_EQ(o->count, 3);
}

TEST(ParseIostatArgs, CpuAndDeviceBlocks) {
  EXPECT_FALSE(ParseIostatArgs({"-c"})->show_devices);
  EXPECT_FALSE(ParseIostatArgs({"-d"})->show_cpu);
  EXPECT_TRUE(ParseIostatArgs({"-c", "-x"})->show_devices);      // -x always shows devices
  EXPECT_FALSE(ParseIostatArgs({"0"})->interval_s.has_value());  // interval 0: one report
}

TEST(ParseIostatArgs, BadInputNamesTheArgument) {
  EXPECT_EQ(ParseIostatArgs({"-q"}).error().message,
            "unknown option '-q' in '-q' (supported: -c -d -x -k -m -N -p -y -z -t -o JSON)");
  EXPECT_EQ(ParseIostatArgs({"-o", "XML"}).error().message,
            "option -o takes the output format JSON");
  EXPECT_EQ(ParseIostatArgs({"-k", "-m"}).error().message, "options -k and -m exclude each other");
  EXPECT_EQ(ParseIostatArgs({"1", "2", "3"}).error().message, "unexpected extra number '3'");
  EXPECT_EQ(ParseIostatArgs({"99999999999"}).error().message, "number '99999999999' is too large");
  EXPECT_EQ(ParseIostatArgs({"0", "3"}).error().message,
            "a count needs an interval of at least 1 second");
}

}  // namespace
}  // namespace iowatch::daemon
