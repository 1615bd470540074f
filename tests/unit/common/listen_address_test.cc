// "host:port", "[ipv6]:port", ":port".
#include "common/listen_address.h"

#include <gtest/gtest.h>

namespace iowatch {
namespace {

ListenAddress Parsed(std::string_view text) {
  const auto a = ParseListenAddress(text);
  EXPECT_TRUE(a.has_value()) << text << ": " << a.error().ToString();
  return a.value_or(ListenAddress{"<error>", 0});
}

TEST(ParseListenAddress, AcceptedForms) {
  EXPECT_EQ(Parsed("127.0.0.1:9860"), (ListenAddress{"127.0.0.1", 9860}));
  EXPECT_EQ(Parsed(":9860"), (ListenAddress{"", 9860}));
  EXPECT_EQ(Parsed("0.0.0.0:1"), (ListenAddress{"0.0.0.0", 1}));
  EXPECT_EQ(Parsed("localhost:65535"), (ListenAddress{"localhost", 65535}));
  EXPECT_EQ(Parsed("[::]:9860"), (ListenAddress{"::", 9860}));
  EXPECT_EQ(Parsed("[::1]:9860"), (ListenAddress{"::1", 9860}));
  EXPECT_EQ(Parsed("[fe80::1%eth0]:9860"), (ListenAddress{"fe80::1%eth0", 9860}));
  EXPECT_EQ(Parsed("[::ffff:192.0.2.1]:443"), (ListenAddress{"::ffff:192.0.2.1", 443}));
}

TEST(ParseListenAddress, MalformedIsAParseErrorNamingTheText) {
  const auto r = ParseListenAddress("localhost");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kParse);
  EXPECT_EQ(r.error().message,
            R"(expected "host:port", "[ipv6]:port" or ":port", found "localhost")");
  for (const char* bad :
       {"", ":", "9860", "localhost:", "::1:9860", "[::1]", "[::1]9860", "[::1:9860", "::1]:9860",
        "[localhost]:80", "[fe80::1%]:80", "localhost: 80", "localhost:+80", "localhost:-1",
        "localhost:0x50", "localhost:80 "}) {
    const auto a = ParseListenAddress(bad);
    EXPECT_FALSE(a.has_value()) << '"' << bad << '"';
    if (!a) {
      EXPECT_EQ(a.error().code, ErrorCode::kParse) << bad;
    }
  }
}

TEST(ParseListenAddress, HostMustBeAnAddressOrLocalhost) {
  const auto r = ParseListenAddress("node-1.example.com:80");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message,
            R"(expected an IP address or "localhost" as host, found "node-1.example.com:80")");
  for (const char* bad :
       {"256.0.0.1:80", "1.2.3:80", "1.2.3.4.5:80", "host:80", "LOCALHOST:80", " :80"}) {
    const auto a = ParseListenAddress(bad);
    ASSERT_FALSE(a.has_value()) << bad;
    EXPECT_EQ(a.error().code, ErrorCode::kInvalidArgument) << bad;
  }
}

TEST(ParseListenAddress, PortOutOfRange) {
  for (const char* bad : {"localhost:0", ":65536", "[::]:99999999999999999999"}) {
    const auto a = ParseListenAddress(bad);
    ASSERT_FALSE(a.has_value()) << bad;
    EXPECT_EQ(a.error().code, ErrorCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ParseListenAddress(":0").error().message,
            R"(expected a port from 1 to 65535, found ":0")");
}

}  // namespace
}  // namespace iowatch
