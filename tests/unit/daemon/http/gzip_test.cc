// gzip compression and Accept-Encoding negotiation.
#include "daemon/http/gzip.h"

#include <gtest/gtest.h>

#include "tests/unit/daemon/http/test_client.h"

namespace iowatch::daemon::http {
namespace {

TEST(GzipCompress, RoundTripsThroughZlibInflate) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += fmt::format("iowatch_x{{device=\"sd{}\"}} {}\n", i % 7, i);
  const auto compressed = GzipCompress(text);
  ASSERT_TRUE(compressed) << compressed.error().ToString();
  ASSERT_GE(compressed->size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[0]), 0x1f);  // gzip magic (RFC 1952)
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[1]), 0x8b);
  EXPECT_LT(compressed->size(), text.size() / 5);
  EXPECT_EQ(testing::Gunzip(*compressed), text);
}

TEST(GzipCompress, EmptyInputIsAValidGzipStream) {
  const auto compressed = GzipCompress("");
  ASSERT_TRUE(compressed);
  EXPECT_EQ(testing::Gunzip(*compressed), "");
}

TEST(AcceptsGzip, FollowsTokensAndQValues) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("GZIP"));
  EXPECT_TRUE(AcceptsGzip("deflate, gzip;q=1.0, *;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_TRUE(AcceptsGzip("br , gzip ; q=0.1"));
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip; q=0.000"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0, *"));  // an explicit refusal wins over "*"
  EXPECT_FALSE(AcceptsGzip("*;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzipx, xgzip"));
}

}  // namespace
}  // namespace iowatch::daemon::http
