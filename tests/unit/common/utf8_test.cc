// Valid UTF-8 passes unchanged; each invalid byte becomes one U+FFFD.
#include "common/utf8.h"

#include <gtest/gtest.h>

namespace iowatch {
namespace {

TEST(Utf8, ValidTextIsKept) {
  for (const std::string_view text : {"", "Samsung SSD 980 PRO 1TB", "caf\xC3\xA9",
                                      "\xE2\x82\xAC 5", "\xF0\x9F\x92\xBE", "\xF4\x8F\xBF\xBF"}) {
    EXPECT_TRUE(IsValidUtf8(text)) << text;
    EXPECT_EQ(ToValidUtf8(text), text);
  }
}

TEST(Utf8, EachInvalidByteBecomesAReplacementCharacter) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(ToValidUtf8("WDC\xFFWD"), "WDC" + r + "WD");      // a byte that never starts a sequence
  EXPECT_EQ(ToValidUtf8("\xC3"), r);                          // truncated
  EXPECT_EQ(ToValidUtf8("\xC0\xAF"), r + r);                  // overlong '/'
  EXPECT_EQ(ToValidUtf8("\xED\xA0\x80"), r + r + r);          // a UTF-16 surrogate
  EXPECT_EQ(ToValidUtf8("\xF4\x90\x80\x80"), r + r + r + r);  // above U+10FFFF
  EXPECT_EQ(ToValidUtf8("\x80x"), r + "x");                   // a lone continuation byte
  EXPECT_FALSE(IsValidUtf8("\xFE"));
  EXPECT_TRUE(IsValidUtf8(ToValidUtf8("\xC3\x28\xA0\xA1\xE2\x28\xA1")));
}

}  // namespace
}  // namespace iowatch
