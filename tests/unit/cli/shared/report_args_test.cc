// What iotop and biolatency share of their command lines: -d, -o JSON, the
// command's own options and [interval [count]], with the messages each
// command printed before they shared them.
#include "cli/shared/report_args.h"

#include <gtest/gtest.h>

namespace iowatch::daemon {
namespace {

constexpr const char* kUsage = "usage: x [-d DEV] [-o JSON] [-q] [interval [count]]";

// The command's own option in these tests: -q, a flag.
Result<ReportArgs> Parse(const std::vector<std::string>& args, bool* quiet = nullptr) {
  return ParseReportArgs(args, kUsage, [quiet](const std::vector<std::string>& all, size_t& i) {
    if (all[i] != "-q") return false;
    if (quiet != nullptr) *quiet = true;
    return true;
  });
}

std::string ErrorOf(const std::vector<std::string>& args) {
  const auto parsed = Parse(args);
  return parsed ? "accepted" : parsed.error().ToString();
}

TEST(ParseReportArgs, NoArgumentsIsOneReportOverOneSecond) {
  const auto o = Parse({});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->device, "");
  EXPECT_FALSE(o->json);
  EXPECT_EQ(o->interval_s, 1u);
  EXPECT_EQ(o->count, 1u);
}

TEST(ParseReportArgs, IntervalAloneIsForever) {
  const auto o = Parse({"5"});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->interval_s, 5u);
  EXPECT_FALSE(o->count);
}

TEST(ParseReportArgs, IntervalAndCount) {
  const auto o = Parse({"2", "3"});
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_EQ(o->interval_s, 2u);
  EXPECT_EQ(o->count, 3u);
  // As before the commands shared it: a count of 0 is taken (no report).
  const auto none = Parse({"2", "0"});
  ASSERT_TRUE(none) << none.error().ToString();
  EXPECT_EQ(none->count, 0u);
}

TEST(ParseReportArgs, IntervalFromOneSecondToADay) {
  EXPECT_EQ(ErrorOf({"0"}), "interval must be from 1 to 86400 seconds");
  EXPECT_EQ(ErrorOf({"86401", "1"}), "interval must be from 1 to 86400 seconds");
  const auto day = Parse({"86400"});
  ASSERT_TRUE(day) << day.error().ToString();
  EXPECT_EQ(day->interval_s, 86400u);
}

TEST(ParseReportArgs, OnlyTwoWholeNumbers) {
  const std::string usage = std::string(" (") + kUsage + ")";
  EXPECT_EQ(ErrorOf({"1", "2", "3"}), "unexpected argument '3'" + usage);
  EXPECT_EQ(ErrorOf({"abc"}), "unexpected argument 'abc'" + usage);
  EXPECT_EQ(ErrorOf({"1.5"}), "unexpected argument '1.5'" + usage);
  EXPECT_EQ(ErrorOf({"+1"}), "unexpected argument '+1'" + usage);
  EXPECT_EQ(ErrorOf({"-"}), "unexpected argument '-'" + usage);
  EXPECT_EQ(ErrorOf({"1", "99999999999999999999"}),
            "unexpected argument '99999999999999999999'" + usage);
  // A negative number is an option, none of which is a number.
  EXPECT_EQ(ErrorOf({"-1"}), "unknown option '-1'" + usage);
}

TEST(ParseReportArgs, DeviceAndJsonAttachedOrNot) {
  const auto apart = Parse({"-d", "sda", "-o", "JSON", "1"});
  ASSERT_TRUE(apart) << apart.error().ToString();
  EXPECT_EQ(apart->device, "sda");
  EXPECT_TRUE(apart->json);
  const auto attached = Parse({"-dnvme0n1", "-oJSON"});
  ASSERT_TRUE(attached) << attached.error().ToString();
  EXPECT_EQ(attached->device, "nvme0n1");
  EXPECT_TRUE(attached->json);
  // The value is the next word whatever it looks like, as getopt takes it.
  const auto dashed = Parse({"-d", "-q"});
  ASSERT_TRUE(dashed) << dashed.error().ToString();
  EXPECT_EQ(dashed->device, "-q");
}

TEST(ParseReportArgs, OptionRefusals) {
  const std::string usage = std::string(" (") + kUsage + ")";
  EXPECT_EQ(ErrorOf({"-d"}), "-d requires a value" + usage);
  EXPECT_EQ(ErrorOf({"1", "-o"}), "-o requires a value" + usage);
  EXPECT_EQ(ErrorOf({"-o", "json"}), "-o takes JSON, found 'json'");
  EXPECT_EQ(ErrorOf({"-oXML"}), "-o takes JSON, found 'XML'");
  EXPECT_EQ(ErrorOf({"-x"}), "unknown option '-x'" + usage);
  EXPECT_EQ(ErrorOf({"--"}), "unknown option '--'" + usage);
}

TEST(ParseReportArgs, TheCommandsOwnOptionsAnywhere) {
  bool quiet = false;
  const auto o = Parse({"1", "-q", "2"}, &quiet);
  ASSERT_TRUE(o) << o.error().ToString();
  EXPECT_TRUE(quiet);
  EXPECT_EQ(o->interval_s, 1u);
  EXPECT_EQ(o->count, 2u);
  // Its error is the command's own, and stops the parse.
  const auto refused = ParseReportArgs({"-q", "-x"}, kUsage, [](const auto& all, size_t& i) {
    return Result<bool>(MakeError(ErrorCode::kInvalidArgument, all[i] + " is refused"));
  });
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().ToString(), "-q is refused");
  // A command without options of its own.
  const auto plain = ParseReportArgs({"-q"}, kUsage, {});
  ASSERT_FALSE(plain);
  EXPECT_EQ(plain.error().ToString(), std::string("unknown option '-q' (") + kUsage + ")");
}

}  // namespace
}  // namespace iowatch::daemon
