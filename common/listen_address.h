// ListenAddress: where the HTTP server listens, as Prometheus exporters spell
// --web.listen-address: "host:port", "[ipv6]:port" or ":port" (every
// address). The host is a literal address or "localhost", never a name to
// resolve (resolution could block, and binding to whatever a name resolves to
// at boot surprises): the same set daemon/http accepts, so a config that
// passes here does not fail later at bind time for its syntax.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace iowatch {

struct ListenAddress {
  std::string host;  // "" for every address; IPv6 without brackets, zone kept ("fe80::1%eth0")
  uint16_t port = 0;

  bool operator==(const ListenAddress&) const = default;
};

// host is empty, "localhost", a dotted-quad IPv4 address, or a bracketed IPv6
// address with an optional "%zone". The port is decimal, 1 to 65535 (0, "any
// free port", is refused: scrapers need a fixed one).
// Errors (kParse, kInvalidArgument) read "expected ..., found "<text>"".
// Port 0 (an ephemeral port, for tests) only when `allow_port_zero`.
Result<ListenAddress> ParseListenAddress(std::string_view text, bool allow_port_zero = false);

}  // namespace iowatch
