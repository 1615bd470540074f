// Single values of the configuration file, from scalar text to typed value,
// with every check that needs no other key. yaml-cpp never reaches here: the
// loader hands over the scalar's text and prefixes the errors with file,
// position and key. Messages read "expected ..., found "<text>"";
// kParse when the text is not of the type, kInvalidArgument when it is but
// the value is not allowed.
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace iowatch::config {

// "true", "True", "TRUE", "false", "False", "FALSE" (YAML 1.2's core schema;
// not YAML 1.1's yes/no/on/off, which surprise more than they help).
Result<bool> ParseBool(std::string_view text);

// Decimal digits only (no sign, no "0x", no suffix), within [min, max].
Result<uint32_t> ParseInteger(std::string_view text, uint32_t min, uint32_t max);
// A decimal number in [min, max], or (min, max] when !min_inclusive.
Result<double> ParseNumber(std::string_view text, double min, double max, bool min_inclusive);

// A size in ParseSize's syntax ("8192", "8k"), within [min, max] bytes.
Result<uint32_t> ParseSizeBetween(std::string_view text, uint32_t min, uint32_t max);

// A duration in ParseDuration's syntax, from `min` to `max`.
Result<std::chrono::milliseconds> ParseDurationBetween(std::string_view text,
                                                       std::chrono::milliseconds min,
                                                       std::chrono::milliseconds max);

// The longest interval, timeout or window a config accepts. Durations become
// nanoseconds on steady_clock and get added, doubled and multiplied: 52 weeks
// leaves those sums far from int64's end (8000w overflowed them: the sampler
// spun, timeouts expired at once).
inline constexpr std::chrono::milliseconds kMaxConfigDuration = std::chrono::weeks(52);

// Any text except the empty string and text with a NUL byte.
Result<std::string> ParsePath(std::string_view text);

// A NamePattern (RE2 syntax, at most NamePattern::kMaxPatternBytes), checked
// as collectors::DeviceFilter compiles it; the empty pattern is valid (no filter).
Result<std::string> ParseRegex(std::string_view text);

// "$2a$", "$2b$" or "$2y$", a two-digit cost from 04 to 31, "$", then 53
// characters of bcrypt's base64 alphabet ("./A-Za-z0-9"): what htpasswd -B
// and Prometheus' web config produce. The message never repeats the value:
// a wrong one is often a plain-text password.
Result<std::string> ParseBcryptHash(std::string_view text);

// HTTP basic authentication cannot carry a user name with ':' or a control
// character (RFC 7617), nor an empty one.
Result<std::string> ParseUserName(std::string_view text);

// trace, debug, info, warn, error or off (spdlog's names; "err" is not one).
Result<std::string> ParseLogLevel(std::string_view text);

}  // namespace iowatch::config
