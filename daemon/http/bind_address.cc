#include "daemon/http/bind_address.h"

#include "common/listen_address.h"

namespace iowatch::daemon::http {
namespace asio = boost::asio;

Result<BindAddress> ToBindAddress(std::string_view text) {
  // The syntax is common/'s (one parser for config files and flags); this adds
  // what only the server needs: the Asio address, and ":port" meaning all.
  auto parsed = iowatch::ParseListenAddress(text, /*allow_port_zero=*/true);
  if (!parsed) return ErrorOf(parsed);
  BindAddress out;
  out.port = parsed->port;
  if (parsed->host.empty()) {
    out.all_addresses = true;
    out.address = asio::ip::address_v6::any();
  } else if (parsed->host == "localhost") {
    out.address = asio::ip::address_v4::loopback();
  } else {
    boost::system::error_code ec;
    out.address = asio::ip::make_address(parsed->host, ec);
    if (ec) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("invalid listen address \"{}\": {}", text, ec.message()));
    }
  }
  return out;
}

std::string FormatEndpoint(const asio::ip::tcp::endpoint& endpoint) {
  asio::ip::address address = endpoint.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  }
  if (address.is_v6()) return fmt::format("[{}]:{}", address.to_string(), endpoint.port());
  return fmt::format("{}:{}", address.to_string(), endpoint.port());
}

}  // namespace iowatch::daemon::http
