// The exposition writer's lines against the format written out plainly: names
// and label values of every length (the writer copies them in chunks of 16, 8,
// 4 and single bytes), escapes, bytes that are not UTF-8, and the values'
// spellings.
#include "daemon/exposition/exposition.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace iowatch::daemon {
namespace {

// `length` characters that differ from each other, so that a byte copied to
// the wrong place shows.
std::string Text(size_t length) {
  std::string text;
  for (size_t i = 0; i < length; ++i) text += static_cast<char>('a' + i % 26);
  return text;
}

std::string Line(std::string_view name, std::initializer_list<Label> labels, double value) {
  std::string out;
  ExpositionWriter w(out);
  w.Family(name, "gauge", "h", /*header_written=*/true);
  w.Sample(labels, value);
  return out;
}

TEST(ExpositionWriter, CopiesNamesAndValuesOfEveryLength) {
  for (size_t n = 0; n <= 70; ++n) {
    SCOPED_TRACE(n);
    const std::string value = Text(n);
    const std::string name = "m" + Text(n);
    EXPECT_EQ(Line(name, {{"device", value}, {"op", "read"}}, 1),
              name + "{device=\"" + value + "\",op=\"read\"} 1\n");
    EXPECT_EQ(Line(name, {}, 2), name + " 2\n");
  }
}

TEST(ExpositionWriter, EscapesAndRepairsLabelValues) {
  EXPECT_EQ(Line("m", {{"path", "a\\b\"c\nd"}}, 1), "m{path=\"a\\\\b\\\"c\\nd\"} 1\n");
  EXPECT_EQ(Line("m", {{"model", "caf\xc3\xa9"}}, 1), "m{model=\"caf\xc3\xa9\"} 1\n");
  // A byte that is not UTF-8 becomes U+FFFD (Prometheus refuses the scrape otherwise).
  EXPECT_EQ(Line("m", {{"serial", "x\xff"}}, 1), "m{serial=\"x\xef\xbf\xbd\"} 1\n");
}

TEST(ExpositionWriter, SpellsValuesAsPrometheusReadsThem) {
  EXPECT_EQ(Line("m", {}, 0), "m 0\n");
  EXPECT_EQ(Line("m", {}, 5.6), "m 5.6\n");
  // Whole numbers below 1e15 take the integer path; from there fmt's shortest form decides.
  EXPECT_EQ(Line("m", {}, 1e15), "m 1000000000000000\n");
  EXPECT_EQ(Line("m", {}, 1e16), "m 1e+16\n");
  EXPECT_EQ(Line("m", {}, 0.000123), "m 0.000123\n");
  EXPECT_EQ(Line("m", {}, 999999999999999), "m 999999999999999\n");
  EXPECT_EQ(Line("m", {}, -3), "m -3\n");
  EXPECT_EQ(Line("m", {}, -0.0), "m -0\n");
  EXPECT_EQ(Line("m", {}, std::numeric_limits<double>::infinity()), "m +Inf\n");
  EXPECT_EQ(Line("m", {}, -std::numeric_limits<double>::infinity()), "m -Inf\n");
  EXPECT_EQ(Line("m", {}, std::nan("")), "m NaN\n");
  std::string out;
  ExpositionWriter w(out);
  w.Family("c", "counter", "h", true);
  w.SampleInt({}, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(out, "c 18446744073709551615\n");
}

TEST(ExpositionWriter, WritesTheHeaderWithTheFirstSampleOnly) {
  std::string out;
  ExpositionWriter w(out);
  w.Family("m", "gauge", "Line one\nand a \\ backslash.");
  w.Sample({}, 1);
  w.Sample({{"a", "b"}}, 2);
  EXPECT_EQ(out, "# HELP m Line one\\nand a \\\\ backslash.\n# TYPE m gauge\nm 1\nm{a=\"b\"} 2\n");
}

}  // namespace
}  // namespace iowatch::daemon
