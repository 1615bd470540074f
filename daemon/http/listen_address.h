// The --web.listen-address syntax, as Prometheus exporters spell it:
// "127.0.0.1:9860", "[::1]:9860", ":9860" (every address, IPv6 and IPv4), and
// "localhost:9860". Only literal addresses are accepted besides "localhost":
// resolving a host name could block, and a daemon binding to whatever a name
// resolves to at boot is a surprise. Port 0 asks the kernel for a free port.
// Thread-safety: pure functions.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace iowatch::daemon::http {

struct ListenAddress {
  boost::asio::ip::address address;  // unspecified ("::") when all_addresses
  uint16_t port = 0;
  bool all_addresses = false;  // ":port": dual-stack "::", falling back to 0.0.0.0
};

Result<ListenAddress> ParseListenAddress(std::string_view text);

// "127.0.0.1:9860" or "[::1]:9860"; IPv4-mapped IPv6 addresses (from a
// dual-stack socket) are printed as the IPv4 address they carry.
std::string FormatEndpoint(const boost::asio::ip::tcp::endpoint& endpoint);

}  // namespace iowatch::daemon::http
