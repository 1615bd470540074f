#include "common/listen_address.h"

#include <arpa/inet.h>

#include <charconv>

namespace iowatch {
namespace {

constexpr char kExpected[] = R"(expected "host:port", "[ipv6]:port" or ":port", found {:?})";

bool IsIpv4(std::string_view host) {
  const std::string address(host);
  in_addr parsed{};
  return inet_pton(AF_INET, address.c_str(), &parsed) == 1;
}

// A zone ("%eth0"), when present, must not be empty.
bool IsIpv6(std::string_view host) {
  const size_t percent = host.find('%');
  if (percent != std::string_view::npos && percent + 1 == host.size()) return false;
  const std::string address(host.substr(0, percent));
  in6_addr parsed{};
  return inet_pton(AF_INET6, address.c_str(), &parsed) == 1;
}

}  // namespace

Result<ListenAddress> ParseListenAddress(std::string_view text, bool allow_port_zero) {
  const auto syntax_error = [&] {
    return MakeError(ErrorCode::kParse, fmt::format(kExpected, text));
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return syntax_error();
  std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  if (host.starts_with('[')) {
    if (!host.ends_with(']') || !IsIpv6(host.substr(1, host.size() - 2))) return syntax_error();
    host = host.substr(1, host.size() - 2);
  } else if (!host.empty() && host != "localhost" && !IsIpv4(host)) {
    if (host.find(':') != std::string_view::npos) return syntax_error();  // IPv6 needs brackets
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format(R"(expected an IP address or "localhost" as host, found {:?})", text));
  }
  if (port_text.empty() || port_text.find_first_not_of("0123456789") != std::string_view::npos) {
    return syntax_error();
  }
  unsigned port = 0;
  const auto [end, ec] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  const unsigned lowest = allow_port_zero ? 0 : 1;
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < lowest ||
      port > 65535) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("expected a port from {} to 65535, found {:?}", lowest, text));
  }
  return ListenAddress{std::string(host), static_cast<uint16_t>(port)};
}

}  // namespace iowatch
