#include "common/name_pattern.h"

#include <gtest/gtest.h>

#include <string>

namespace iowatch {
namespace {

TEST(NamePattern, MatchesTheWholeName) {
  const auto p = NamePattern::Compile("sd[a-z]|nvme\\d+n\\d+");
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->FullMatch("sda"));
  EXPECT_TRUE(p->FullMatch("nvme0n1"));
  EXPECT_FALSE(p->FullMatch("sda1"));
  EXPECT_FALSE(p->FullMatch("xsda"));
  EXPECT_EQ(p->pattern(), "sd[a-z]|nvme\\d+n\\d+");
}

// Paths are bytes: a byte outside valid UTF-8 is one character, as Go's
// regexp (node_exporter's mount point filter) reads it.
TEST(NamePattern, AByteThatIsNotUtf8IsOneCharacter) {
  const auto dev = NamePattern::Compile("^/(dev|proc|sys)(/.*)?$");
  ASSERT_TRUE(dev.has_value());
  EXPECT_TRUE(dev->FullMatch("/dev/\xff\xfe"));
  EXPECT_TRUE(dev->FullMatch("/sys/fs/\xc3(x"));  // a sequence cut short
  EXPECT_FALSE(dev->FullMatch("/data/\xff"));
  const auto one = NamePattern::Compile("sd[^/]");
  ASSERT_TRUE(one.has_value());
  EXPECT_TRUE(one->FullMatch("sd\xff"));
  EXPECT_FALSE(one->FullMatch("sd\xff\xff"));
  EXPECT_TRUE(one->FullMatch("sd\xc3\xa9"));  // é: one character, valid
}

TEST(NamePattern, CopiesShareTheProgram) {
  const auto p = NamePattern::Compile("loop\\d+");
  ASSERT_TRUE(p.has_value());
  const NamePattern copy = *p;
  EXPECT_TRUE(copy.FullMatch("loop7"));
}

TEST(NamePattern, ErrorsQuoteAtMost64BytesOfThePattern) {
  const auto bad = NamePattern::Compile("[a-");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message,
            "expected a regular expression (RE2 syntax), found \"[a-\" (missing ]: [a-)");
  const std::string long_bad = "(" + std::string(100, 'x');
  const auto cut = NamePattern::Compile(long_bad);
  ASSERT_FALSE(cut.has_value());
  EXPECT_TRUE(
      cut.error().message.starts_with("expected a regular expression (RE2 syntax), found \"(" +
                                      std::string(63, 'x') + "\"... (101 bytes) (missing ): "))
      << cut.error().message;
}

TEST(NamePattern, TheSizeLimitIsInclusive) {
  EXPECT_TRUE(NamePattern::Compile(std::string(NamePattern::kMaxPatternBytes, 'a')).has_value());
  const auto over = NamePattern::Compile(std::string(NamePattern::kMaxPatternBytes + 1, 'a'));
  ASSERT_FALSE(over.has_value());
  EXPECT_TRUE(over.error().message.starts_with(
      "expected a regular expression of at most 4096 bytes, found \"aaaa"))
      << over.error().message;
}

TEST(NamePattern, BacktrackingOnlySyntaxIsRefused) {
  EXPECT_FALSE(NamePattern::Compile("(?!loop).*").has_value());
  EXPECT_FALSE(NamePattern::Compile("(a)\\1").has_value());
}

}  // namespace
}  // namespace iowatch
