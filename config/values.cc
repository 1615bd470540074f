#include "config/values.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>

#include "common/name_pattern.h"
#include "common/units.h"
#include "common/utf8.h"

namespace iowatch::config {
namespace {

std::unexpected<Error> Expected(ErrorCode code, std::string_view what, std::string_view text) {
  return MakeError(code, fmt::format("expected {}, found {:?}", what, text));
}

bool IsBcryptBase64(char c) {
  return c == '.' || c == '/' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9');
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<bool> ParseBool(std::string_view text) {
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return Expected(ErrorCode::kParse, "true or false", text);
}

Result<uint32_t> ParseInteger(std::string_view text, uint32_t min, uint32_t max) {
  const std::string what = fmt::format("an integer from {} to {}", min, max);
  // std::from_chars alone would stop at the first non-digit ("64k" -> 64).
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) {
    return Expected(ErrorCode::kParse, what, text);
  }
  uint64_t n = 0;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), n);
  if (parsed.ec != std::errc() || n < min || n > max) {
    return Expected(ErrorCode::kInvalidArgument, what, text);
  }
  return static_cast<uint32_t>(n);
}

Result<uint32_t> ParseSizeBetween(std::string_view text, uint32_t min, uint32_t max) {
  const std::string what =
      fmt::format(R"(a size from {} to {} bytes, like "8192" or "8k")", min, max);
  const auto n = ParseSize(text);
  if (!n && n.error().code == ErrorCode::kParse) return Expected(ErrorCode::kParse, what, text);
  if (!n || *n < min || *n > max) return Expected(ErrorCode::kInvalidArgument, what, text);
  return static_cast<uint32_t>(*n);
}

Result<std::chrono::milliseconds> ParseDurationBetween(std::string_view text,
                                                       std::chrono::milliseconds min,
                                                       std::chrono::milliseconds max) {
  const auto d = ParseDuration(text);
  if (!d) return d;
  if (*d < min) {
    return Expected(ErrorCode::kInvalidArgument,
                    fmt::format("a duration of at least {}", FormatDuration(min)), text);
  }
  if (*d > max) {
    return Expected(ErrorCode::kInvalidArgument,
                    fmt::format("a duration of at most {}", FormatDuration(max)), text);
  }
  return d;
}

Result<std::string> ParsePath(std::string_view text) {
  if (text.empty()) return Expected(ErrorCode::kInvalidArgument, "a non-empty path", text);
  // The kernel would see the path cut at the NUL: refuse, do not truncate.
  if (text.find('\0') != std::string_view::npos) {
    return Expected(ErrorCode::kInvalidArgument, "a path without NUL bytes", text);
  }
  return std::string(text);
}

Result<std::string> ParseRegex(std::string_view text) {
  const auto compiled = NamePattern::Compile(text);
  if (!compiled) return ErrorOf(compiled);
  return std::string(text);
}

Result<std::string> ParseBcryptHash(std::string_view text) {
  // "$2y$" + "10" + "$" + 53 = 60 characters.
  bool ok = text.size() == 60 && text.starts_with("$2") &&
            (text[2] == 'a' || text[2] == 'b' || text[2] == 'y') && text[3] == '$' &&
            IsDigit(text[4]) && IsDigit(text[5]) && text[6] == '$';
  if (ok) {
    const int cost = (text[4] - '0') * 10 + (text[5] - '0');
    ok = cost >= 4 && cost <= 31;
  }
  for (size_t i = 7; ok && i < text.size(); ++i) ok = IsBcryptBase64(text[i]);
  if (ok) return std::string(text);
  return MakeError(
      ErrorCode::kInvalidArgument,
      R"(expected a bcrypt hash ("$2y$", a cost from 04 to 31, "$" and 53 characters, )"
      R"(as "htpasswd -nbBC 10 user password" prints), found something else )"
      "(not shown: it may be a password)");
}

Result<std::string> ParseUserName(std::string_view text) {
  if (text.empty() || text.find(':') != std::string_view::npos) {
    return Expected(ErrorCode::kInvalidArgument, "a user name without ':'", text);
  }
  // RFC 7617: a user-id has no control character; no client could send it.
  if (ControlCharacterAt(text)) {
    return Expected(ErrorCode::kInvalidArgument, "a user name without control characters", text);
  }
  return std::string(text);
}

Result<std::string> ParseLogLevel(std::string_view text) {
  constexpr std::array<std::string_view, 6> kLevels = {"trace", "debug", "info",
                                                       "warn",  "error", "off"};
  for (std::string_view level : kLevels) {
    if (text == level) return std::string(text);
  }
  return Expected(ErrorCode::kInvalidArgument, "one of trace, debug, info, warn, error, off", text);
}

// A decimal number in [min, max], or (min, max] when !min_inclusive; read
// with from_chars, so the locale cannot change it; no inf, nan, hex or sign.
Result<double> ParseNumber(std::string_view text, double min, double max, bool min_inclusive) {
  const std::string message =
      fmt::format("expected a number {} {} and at most {}, found {:?}",
                  min_inclusive ? "at least" : "greater than", min, max, text);
  double n = 0;
  const char* end = text.data() + text.size();
  const bool plain = !text.empty() && text.find_first_not_of("0123456789.eE-") == text.npos;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), n);
  if (!plain || parsed.ec != std::errc() || parsed.ptr != end || !std::isfinite(n)) {
    return MakeError(ErrorCode::kParse, message);
  }
  if (n < min || (n == min && !min_inclusive) || n > max) {
    return MakeError(ErrorCode::kInvalidArgument, message);
  }
  return n;
}

}  // namespace iowatch::config
