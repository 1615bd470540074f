#include "daemon/http/listen_address.h"

#include <charconv>

namespace iowatch::daemon::http {
namespace asio = boost::asio;

namespace {

std::unexpected<Error> Invalid(std::string_view text, std::string_view why) {
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("invalid listen address \"{}\": {} (expected host:port such as "
                               "\"127.0.0.1:9860\", \"[::1]:9860\" or \":9860\")",
                               text, why));
}

}  // namespace

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return Invalid(text, "no port");
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);

  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() ||
      port > 65535) {
    return Invalid(text, "the port must be a number from 0 to 65535");
  }

  ListenAddress out;
  out.port = static_cast<uint16_t>(port);
  if (host.empty()) {
    out.all_addresses = true;
    out.address = asio::ip::address_v6::any();
    return out;
  }
  const bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (bracketed) host = host.substr(1, host.size() - 2);
  if (host == "localhost") {
    out.address = asio::ip::address_v4::loopback();
    return out;
  }
  boost::system::error_code parse_ec;
  out.address = asio::ip::make_address(std::string(host), parse_ec);
  if (parse_ec) return Invalid(text, "the host must be an IP address or \"localhost\"");
  if (out.address.is_v6() && !bracketed) return Invalid(text, "write IPv6 addresses in brackets");
  if (out.address.is_v4() && bracketed) return Invalid(text, "brackets are for IPv6 addresses");
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
