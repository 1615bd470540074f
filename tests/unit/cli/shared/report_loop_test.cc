// The reporting commands' loop: as many reports as asked, each written to
// stdout in order, and the first error stops it and is returned.
#include <gtest/gtest.h>

#include <string>

#include "cli/shared/sleeper.h"

namespace iowatch::daemon {
namespace {

TEST(ReportEveryInterval, WritesEachReportTheCountAsked) {
  int calls = 0;
  testing::internal::CaptureStdout();
  const Status done = ReportEveryInterval(std::chrono::seconds(0), 3, [&]() -> Result<std::string> {
    return "report " + std::to_string(++calls) + "\n";
  });
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "report 1\nreport 2\nreport 3\n");
  EXPECT_TRUE(done.has_value());
  EXPECT_EQ(calls, 3);
}

TEST(ReportEveryInterval, ZeroReportsCallsNothing) {
  int calls = 0;
  const Status done = ReportEveryInterval(std::chrono::seconds(0), 0, [&]() -> Result<std::string> {
    ++calls;
    return "";
  });
  EXPECT_TRUE(done.has_value());
  EXPECT_EQ(calls, 0);
}

TEST(ReportEveryInterval, StopsAtTheFirstErrorAndReturnsIt) {
  int calls = 0;
  testing::internal::CaptureStdout();
  const Status done =
      ReportEveryInterval(std::chrono::seconds(0), std::nullopt, [&]() -> Result<std::string> {
        if (++calls == 2) return std::unexpected(Error::NotFound("the disk went away"));
        return "first\n";
      });
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "first\n");
  ASSERT_FALSE(done.has_value());
  EXPECT_NE(done.error().ToString().find("the disk went away"), std::string::npos);
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace iowatch::daemon
