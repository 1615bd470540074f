// The --web.listen-address syntax.
#include "daemon/http/bind_address.h"

#include <gtest/gtest.h>

namespace iowatch::daemon::http {
namespace {

namespace asio = boost::asio;

TEST(BindAddress, AcceptsTheExporterForms) {
  auto a = ToBindAddress("127.0.0.1:9860");
  ASSERT_TRUE(a) << a.error().ToString();
  EXPECT_EQ(a->address, asio::ip::make_address("127.0.0.1"));
  EXPECT_EQ(a->port, 9860);
  EXPECT_FALSE(a->all_addresses);

  a = ToBindAddress("[::1]:9860");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->address, asio::ip::make_address("::1"));

  a = ToBindAddress(":9860");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->all_addresses);
  EXPECT_EQ(a->port, 9860);

  a = ToBindAddress("localhost:0");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->address.is_loopback());
  EXPECT_EQ(a->port, 0);
}

TEST(BindAddress, RejectsWithAReason) {
  for (const char* bad : {"9860", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1",
                          "127.0.0.1:80x", "example.org:80", "::1:80", "[127.0.0.1]:80"}) {
    const auto a = ToBindAddress(bad);
    ASSERT_FALSE(a) << bad;
    EXPECT_NE(a.error().ToString().find(bad), std::string::npos) << a.error().ToString();
  }
}

TEST(FormatEndpoint, BracketsIpv6AndUnmapsIpv4) {
  using asio::ip::tcp;
  EXPECT_EQ(FormatEndpoint(tcp::endpoint(asio::ip::make_address("10.0.0.1"), 80)), "10.0.0.1:80");
  EXPECT_EQ(FormatEndpoint(tcp::endpoint(asio::ip::make_address("::1"), 80)), "[::1]:80");
  EXPECT_EQ(FormatEndpoint(tcp::endpoint(asio::ip::make_address("::ffff:10.0.0.1"), 80)),
            "10.0.0.1:80");
}

}  // namespace
}  // namespace iowatch::daemon::http
