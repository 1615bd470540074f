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
