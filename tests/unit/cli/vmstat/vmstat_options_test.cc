// The procps-style command line of `iowatch vmstat`.
#include "cli/vmstat/vmstat_options.h"

#include <gtest/gtest.h>

namespace iowatch::daemon {
namespace {

TEST(ParseVmstatArgs, OptionsUnitsAndNumbers) {
  auto o = ParseVmstatArgs({"-wat", "-n", "-Sm", "2", "10"});
  ASSERT_TRUE(o.has_value());
  EXPECT_TRUE(o->wide && o->active && o->timestamp && o->one_header);
  EXPECT_EQ(o->unit_bytes, 1000000u);
  EXPECT_EQ(o->delay_s, 2u);
  EXPECT_EQ(o->count, 10u);
  EXPECT_EQ(ParseVmstatArgs({"-S", "M"})->unit_bytes, 1048576u);
  EXPECT_EQ(ParseVmstatArgs({"-S", "k"})->unit_bytes, 1000u);
  EXPECT_EQ(ParseVmstatArgs({})->unit_bytes, 1024u);
}

TEST(ParseVmstatArgs, BadInputIsAClearError) {
  EXPECT_EQ(ParseVmstatArgs({"-S", "x"}).error().message,
            "-S requires k, K, m or M (default is KiB)");
  EXPECT_EQ(ParseVmstatArgs({"-S"}).error().message, "-S requires k, K, m or M (default is KiB)");
  EXPECT_EQ(ParseVmstatArgs({"1.5"}).error().message, "delay '1.5' is not a whole number");
  EXPECT_EQ(ParseVmstatArgs({"0"}).error().message, "delay must be a positive integer");
  EXPECT_EQ(ParseVmstatArgs({"1", "2", "3"}).error().message, "unexpected argument '3'");
  EXPECT_EQ(ParseVmstatArgs({"-q"}).error().message,
            "unknown option '-q' in '-q' (supported: -a -w -t -n -y -S k|K|m|M)");
}

}  // namespace
}  // namespace iowatch::daemon
