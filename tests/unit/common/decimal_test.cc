// ParseDecimal: the whole text, digits only, overflow rejected, for every
// unsigned width; ParseDecimalLine: the same with one trailing newline.
#include "common/decimal.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace iowatch {
namespace {

TEST(ParseDecimal, TakesDigitsOnlyAndTheWholeText) {
  EXPECT_EQ(ParseDecimal<uint64_t>("0"), 0u);
  EXPECT_EQ(ParseDecimal<uint64_t>("007"), 7u);
  EXPECT_EQ(ParseDecimal<uint64_t>("18446744073709551615"), UINT64_MAX);
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1\n", "0x10", "1k", "1.0", "1e3", "１"}) {
    EXPECT_EQ(ParseDecimal<uint64_t>(bad), std::nullopt) << '"' << bad << '"';
  }
}

TEST(ParseDecimal, RejectsWhatOverflowsTheType) {
  EXPECT_EQ(ParseDecimal<uint64_t>("18446744073709551616"), std::nullopt);
  EXPECT_EQ(ParseDecimal<uint32_t>("4294967295"), UINT32_MAX);
  EXPECT_EQ(ParseDecimal<uint32_t>("4294967296"), std::nullopt);
  EXPECT_EQ(ParseDecimal<uint16_t>("65536"), std::nullopt);
}

TEST(ParseDecimalLine, TakesOneTrailingNewline) {
  EXPECT_EQ(ParseDecimalLine<uint32_t>("512\n"), 512u);
  EXPECT_EQ(ParseDecimalLine<uint32_t>("512"), 512u);
  EXPECT_EQ(ParseDecimalLine<uint32_t>("512\n\n"), std::nullopt);
  EXPECT_EQ(ParseDecimalLine<uint32_t>("\n"), std::nullopt);
}

}  // namespace
}  // namespace iowatch
