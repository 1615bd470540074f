// ParsePressure on this machine's /proc/pressure/io layout, the cpu file of
// kernels before 5.13 (no "full"), and malformed text (path:line and what was
// expected).
#include "collectors/pressure/pressure.h"

#include <gtest/gtest.h>

#include "tests/unit/source_tree.h"

namespace iowatch::collectors {
namespace {

TEST(ParsePressure, SomeAndFullAsTheKernelPrintsThem) {
  const auto p = ParsePressure(
      "some avg10=0.03 avg60=0.31 avg300=1.81 total=2733142479\n"
      "full avg10=0.03 avg60=0.30 avg300=1.71 total=1512831597\n",
      "pressure/io");
  ASSERT_TRUE(p) << p.error().ToString();
  EXPECT_EQ(p->some, (PressureLine{0.03, 0.31, 1.81, 2733142479}));
  ASSERT_TRUE(p->full);
  EXPECT_EQ(p->full->total_us, 1512831597u);
  EXPECT_DOUBLE_EQ(p->full->avg300, 1.71);
}

TEST(ParsePressure, FullIsOptionalAndUnknownLinesAreIgnored) {
  const auto p =
      ParsePressure("some avg10=100.00 avg60=0.00 avg300=0.00 total=0\nnew x=1\n", "pressure/cpu");
  ASSERT_TRUE(p) << p.error().ToString();
  EXPECT_DOUBLE_EQ(p->some.avg10, 100.0);
  EXPECT_FALSE(p->full);
}

TEST(ParsePressure, MalformedTextNamesFileLineAndTheExpectedForm) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"",
       "pressure/io:1: expected 'some|full avg10=<percent> avg60=<percent> "
       "avg300=<percent> total=<us>': no 'some' line"},
      {"full avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",
       "pressure/io:1: expected 'some|full avg10=<percent> avg60=<percent> "
       "avg300=<percent> total=<us>': no 'some' line"},
      {"some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nfull avg10=-1 avg60=0 avg300=0 total=1\n",
       "pressure/io:2: expected 'some|full avg10=<percent> avg60=<percent> avg300=<percent> "
       "total=<us>', found 'full avg10=-1 avg60=0 avg300=0 total=1'"},
  };
  for (const Case& c : cases) {
    const auto p = ParsePressure(c.text, "pressure/io");
    ASSERT_FALSE(p) << c.text;
    EXPECT_EQ(p.error().ToString(), c.error);
  }
  for (const char* bad : {"some avg10=0.00 avg60=0.00 avg300=0.00\n",
                          "some avg10=0.00 avg60=0.00 avg300=0.00 total=-5\n",
                          "some avg10=101.00 avg60=0.00 avg300=0.00 total=5\n",
                          "some avg10=nan avg60=0.00 avg300=0.00 total=5\n",
                          "some avg60=0.00 avg10=0.00 avg300=0.00 total=5\n",
                          "some avg10=0.00 avg60=0.00 avg300=0.00 total=5 extra\n"}) {
    EXPECT_FALSE(ParsePressure(bad, "p")) << bad;
  }
}

TEST(ReadPressure, ReadsTheResourceFileUnderProcfsAndNamesItWhenAbsent) {
  const FileTree procfs(iowatch::testing::FixturesDir() + "/metrics-two-samples/s2/proc");
  const auto io = ReadPressure(procfs, "io");
  ASSERT_TRUE(io) << io.error().ToString();
  EXPECT_EQ(io->full->total_us, 63701003u);
  const auto none = ReadPressure(FileTree(iowatch::testing::FixturesDir() + "/cciss/proc"), "io");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ErrorCode::kNotFound);
  EXPECT_NE(none.error().ToString().find("cciss/proc/pressure/io"), std::string::npos);
}

TEST(PressureRatio, RoundsToTheKernelsTwoDecimals) {
  EXPECT_EQ(PressureRatio(40.26), 0.4026);
  EXPECT_EQ(PressureRatio(100.00), 1.0);
  EXPECT_EQ(PressureRatio(0.01), 0.0001);
}

}  // namespace
}  // namespace iowatch::collectors
