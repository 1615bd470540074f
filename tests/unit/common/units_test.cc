// Durations (Prometheus' syntax) and sizes (fio 3.33's, kb_base=1024).
#include "common/units.h"

#include <gtest/gtest.h>

#include <limits>

namespace iowatch {
namespace {

using std::chrono::milliseconds;

milliseconds Ms(std::string_view text) {
  const auto d = ParseDuration(text);
  EXPECT_TRUE(d.has_value()) << text << ": " << d.error().ToString();
  return d.value_or(milliseconds(-1));
}

uint64_t Bytes(std::string_view text) {
  const auto n = ParseSize(text);
  EXPECT_TRUE(n.has_value()) << text << ": " << n.error().ToString();
  return n.value_or(0xdeadbeef);
}

TEST(ParseDuration, EveryUnitAlone) {
  EXPECT_EQ(Ms("500ms"), milliseconds(500));
  EXPECT_EQ(Ms("1s"), milliseconds(1000));
  EXPECT_EQ(Ms("15m"), milliseconds(15 * 60 * 1000));
  EXPECT_EQ(Ms("2h"), milliseconds(2 * 3600 * 1000));
  EXPECT_EQ(Ms("2d"), milliseconds(2 * 86400 * 1000));
  EXPECT_EQ(Ms("1w"), milliseconds(7 * 86400 * 1000));
}

TEST(ParseDuration, TermsFromLargestToSmallest) {
  EXPECT_EQ(Ms("1h30m"), milliseconds(90 * 60 * 1000));
  EXPECT_EQ(Ms("1m1ms"), milliseconds(60001));
  EXPECT_EQ(Ms("1w1d1h1m1s1ms"), milliseconds(694861001));
  EXPECT_EQ(Ms("1s500ms"), milliseconds(1500));
  EXPECT_EQ(Ms("90s"), milliseconds(90000));  // a term may exceed the next unit
  EXPECT_EQ(Ms("007s"), milliseconds(7000));
}

TEST(ParseDuration, ZeroAloneOrWithAUnit) {
  EXPECT_EQ(Ms("0"), milliseconds(0));
  EXPECT_EQ(Ms("0s"), milliseconds(0));
  EXPECT_EQ(Ms("0ms"), milliseconds(0));
}

TEST(ParseDuration, SyntaxErrorsSayWhatWasExpected) {
  const auto r = ParseDuration("fast");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kParse);
  EXPECT_EQ(r.error().ToString(),
            R"(expected a duration like "500ms", "1s" or "15m", found "fast")");
  for (const char* bad : {"",      "10",   "1",   "s",   "-1s", "+1s", "1.5s",  "1 s",   " 1s",
                          "1s ",   "1S",   "1H",  "1y",  "1ns", "1us", "1sec",  "30m1h", "1s1s",
                          "1ms1s", "1m1m", "1h1", "1s0", "ms",  "00",  "0x10s", "1d\n"}) {
    const auto d = ParseDuration(bad);
    EXPECT_FALSE(d.has_value()) << '"' << bad << '"';
    if (!d) {
      EXPECT_EQ(d.error().code, ErrorCode::kParse) << bad;
    }
  }
}

TEST(ParseDuration, LargestValueAndOverflow) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(Ms("9223372036854775807ms"), milliseconds(max));
  EXPECT_EQ(Ms("9223372036854775s807ms"), milliseconds(max));
  EXPECT_EQ(Ms("15250284452w285175807ms"), milliseconds(max));
  for (const char* big : {"9223372036854775808ms", "9223372036854776s", "18446744073709551616ms",
                          "99999999999999999999999w", "15250284452w285175808ms"}) {
    const auto d = ParseDuration(big);
    ASSERT_FALSE(d.has_value()) << big;
    EXPECT_EQ(d.error().code, ErrorCode::kInvalidArgument) << big;
  }
  EXPECT_EQ(ParseDuration("15250284453w").error().message,
            R"(duration "15250284453w" is out of range (at most 2^63-1 ms))");
}

TEST(FormatDuration, ShortestFormParsesBack) {
  EXPECT_EQ(FormatDuration(milliseconds(0)), "0s");
  EXPECT_EQ(FormatDuration(milliseconds(500)), "500ms");
  EXPECT_EQ(FormatDuration(milliseconds(1500)), "1s500ms");
  EXPECT_EQ(FormatDuration(milliseconds(90 * 60 * 1000)), "1h30m");
  EXPECT_EQ(FormatDuration(milliseconds(8 * 86400 * 1000LL)), "1w1d");
  EXPECT_EQ(FormatDuration(milliseconds(-2000)), "-2s");
  EXPECT_EQ(FormatDuration(milliseconds::max()), "15250284452w3d7h12m55s807ms");
  EXPECT_EQ(FormatDuration(milliseconds::min()), "-15250284452w3d7h12m55s808ms");
  for (int64_t ms : {int64_t{1}, int64_t{59999}, int64_t{3600001}, int64_t{694861001},
                     std::numeric_limits<int64_t>::max()}) {
    EXPECT_EQ(Ms(FormatDuration(milliseconds(ms))), milliseconds(ms)) << ms;
  }
}

TEST(ParseSize, PlainBytes) {
  EXPECT_EQ(Bytes("0"), 0u);
  EXPECT_EQ(Bytes("4096"), 4096u);
  EXPECT_EQ(Bytes("4b"), 4u);
  EXPECT_EQ(Bytes("4B"), 4u);
  EXPECT_EQ(Bytes("18446744073709551615"), std::numeric_limits<uint64_t>::max());
}

// The values fio 3.33 gives (`fio --ioengine=null --size=X --bs=X`, io_bytes).
TEST(ParseSize, BinaryPrefixesAsFioReadsThem) {
  for (const char* k : {"4k", "4K", "4kb", "4kB", "4Kb", "4KB"}) EXPECT_EQ(Bytes(k), 4096u) << k;
  EXPECT_EQ(Bytes("1m"), 1048576u);
  EXPECT_EQ(Bytes("1M"), 1048576u);
  EXPECT_EQ(Bytes("1MB"), 1048576u);
  EXPECT_EQ(Bytes("1g"), 1073741824u);
  EXPECT_EQ(Bytes("1GB"), 1073741824u);
  EXPECT_EQ(Bytes("1T"), 1099511627776u);
  EXPECT_EQ(Bytes("1tb"), 1099511627776u);
  EXPECT_EQ(Bytes("1P"), 1125899906842624u);
  EXPECT_EQ(Bytes("1pB"), 1125899906842624u);
}

TEST(ParseSize, IecSpellingsAreDecimalAsInFiosDefaultCompatibilityMode) {
  EXPECT_EQ(Bytes("4KiB"), 4000u);
  EXPECT_EQ(Bytes("4kib"), 4000u);
  EXPECT_EQ(Bytes("1MiB"), 1000000u);
  EXPECT_EQ(Bytes("256MiB"), 256000000u);
  EXPECT_EQ(Bytes("1GiB"), 1000000000u);
  EXPECT_EQ(Bytes("1TIB"), 1000000000000u);
  EXPECT_EQ(Bytes("1PiB"), 1000000000000000u);
}

TEST(ParseSize, LooseFioFormsAreErrors) {
  const auto r = ParseSize("abc");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kParse);
  EXPECT_EQ(r.error().message, R"(expected a size like "4096", "4k" or "1M", found "abc")");
  for (const char* bad : {"", "k", "-1", "+1", "1.5k", "0x10", "4 k", " 4k", "4k ", "4kk", "4Ki",
                          "4kbb", "1E", "1EiB", "1e3", "10%", "4ib", "4bytes", "4kiB2"}) {
    const auto n = ParseSize(bad);
    EXPECT_FALSE(n.has_value()) << '"' << bad << '"';
    if (!n) {
      EXPECT_EQ(n.error().code, ErrorCode::kParse) << bad;
    }
  }
}

TEST(ParseSize, Overflow) {
  EXPECT_EQ(Bytes("16383p"), 16383ULL << 50);
  EXPECT_EQ(Bytes("18446744073709551KiB"), 18446744073709551000u);
  for (const char* big : {"18446744073709551616", "16384p", "17179869184G", "18446744073709552KiB",
                          "99999999999999999999999999k"}) {
    const auto n = ParseSize(big);
    ASSERT_FALSE(n.has_value()) << big;
    EXPECT_EQ(n.error().code, ErrorCode::kInvalidArgument) << big;
  }
  EXPECT_EQ(ParseSize("16384p").error().message,
            R"(size "16384p" is out of range (at most 2^64-1 bytes))");
}

}  // namespace
}  // namespace iowatch
