// BindAddress: a --web.listen-address (its syntax and checks are
// common/listen_address.h's, one parser for flags and config files) as the
// server binds it: "127.0.0.1:9860", "[::1]:9860", ":9860" (every address,
// IPv6 and IPv4), "localhost:9860". Port 0 asks the kernel for a free port.
// Thread-safety: pure functions.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace iowatch::daemon::http {

// Where the server binds: a --web.listen-address (common/listen_address.h)
// made an Asio address.
struct BindAddress {
  boost::asio::ip::address address;  // unspecified ("::") when all_addresses
  uint16_t port = 0;
  bool all_addresses = false;  // ":port": dual-stack "::", falling back to 0.0.0.0
};

Result<BindAddress> ToBindAddress(std::string_view text);

// "127.0.0.1:9860" or "[::1]:9860"; IPv4-mapped IPv6 addresses (from a
// dual-stack socket) are printed as the IPv4 address they carry.
std::string FormatEndpoint(const boost::asio::ip::tcp::endpoint& endpoint);

}  // namespace iowatch::daemon::http
