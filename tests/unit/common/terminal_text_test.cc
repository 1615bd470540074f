// TerminalText: what no terminal may receive raw, shown as "\xHH"; the rest
// kept.
#include "common/terminal_text.h"

#include <gtest/gtest.h>

namespace iowatch {
namespace {

TEST(TerminalText, PlainAndUtf8NamesAreKept) {
  for (const std::string_view text :
       {"", "sda", "nvme0n1p1", "/srv/data/x.0.0", "Samsung SSD 980 PRO 1TB",
        "caf\xC3\xA9 \xE2\x82\xAC 5", "\xF0\x9F\x92\xBE", "[x]: {y} 50% \"q\" 'a b'"}) {
    EXPECT_EQ(TerminalText(text), text);
  }
}

TEST(TerminalText, EscapesAndControlsAreShownAsBytes) {
  // The device name: a title change, a bell, a screen clear.
  EXPECT_EQ(TerminalText("sd\x1b]0;PWNED\a\x1b[2J"), "sd\\x1b]0;PWNED\\x07\\x1b[2J");
  EXPECT_EQ(TerminalText("a\rb\nc\td"), "a\\x0db\\x0ac\\x09d");
  EXPECT_EQ(TerminalText(std::string_view("x\0y", 3)), "x\\x00y");
  EXPECT_EQ(TerminalText("del\x7f"), "del\\x7f");
  // C1 controls: CSI (U+009B) is an escape sequence's start to many terminals.
  EXPECT_EQ(TerminalText("\xC2\x9B"
                         "2J"),
            "\\xc2\\x9b2J");
  EXPECT_EQ(TerminalText("\xC2\x80\xC2\x9F\xC2\xA0"), "\\xc2\\x80\\xc2\\x9f\xC2\xA0");  // NBSP kept
}

TEST(TerminalText, InvalidUtf8IsShownByteByByte) {
  EXPECT_EQ(TerminalText("WDC\xFFWD"), "WDC\\xffWD");
  EXPECT_EQ(TerminalText("\xC3"), "\\xc3");                    // truncated
  EXPECT_EQ(TerminalText("\xC0\xAF"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(TerminalText("\xED\xA0\x80"), "\\xed\\xa0\\x80");  // a surrogate
}

TEST(TerminalText, BackslashesAreDoubledSoTheFormIsUnambiguous) {
  EXPECT_EQ(TerminalText("getty\\x2dtty1.service"), "getty\\\\x2dtty1.service");
  // A name that spells an escape cannot pass for the byte.
  EXPECT_NE(TerminalText("\\x1b"), TerminalText("\x1b"));
  std::string out = "> ";
  AppendTerminalText(out, "a\\b\x1b");
  EXPECT_EQ(out, "> a\\\\b\\x1b");
}

}  // namespace
}  // namespace iowatch
