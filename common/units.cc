#include "common/units.h"

#include <array>
#include <cctype>
#include <iterator>
#include <limits>
#include <optional>

namespace iowatch {
namespace {

constexpr char kDurationExpected[] =
    R"(expected a duration like "500ms", "1s" or "15m", found {:?})";
constexpr char kSizeExpected[] = R"(expected a size like "4096", "4k" or "1M", found {:?})";

struct DurationUnit {
  std::string_view name;
  uint64_t ms;
};

// Largest first: the order terms must appear in, as in Prometheus.
constexpr std::array<DurationUnit, 6> kDurationUnits{{
    {"w", 7ULL * 24 * 3600 * 1000},
    {"d", 24ULL * 3600 * 1000},
    {"h", 3600 * 1000ULL},
    {"m", 60 * 1000ULL},
    {"s", 1000ULL},
    {"ms", 1ULL},
}};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads the leading decimal digits of `text` into `value`; nullopt when there
// are none, `overflow` set when they do not fit in 64 bits.
std::optional<size_t> ReadDigits(std::string_view text, uint64_t& value, bool& overflow) {
  size_t i = 0;
  value = 0;
  for (; i < text.size() && IsDigit(text[i]); ++i) {
    const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) overflow = true;
    value = value * 10 + digit;
  }
  if (i == 0) return std::nullopt;
  return i;
}

bool MultiplyAdd(uint64_t count, uint64_t unit, uint64_t& total) {
  if (unit != 0 && count > std::numeric_limits<uint64_t>::max() / unit) return false;
  const uint64_t product = count * unit;
  if (total > std::numeric_limits<uint64_t>::max() - product) return false;
  total += product;
  return true;
}

// Suffix -> multiplier under fio's default kb_base=1024; 0 when unknown.
uint64_t SizeMultiplier(std::string_view suffix) {
  std::string lower;
  for (char c : suffix) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.empty() || lower == "b") return 1;
  constexpr std::string_view kPrefixes = "kmgtp";
  if (lower.size() > 3) return 0;
  const size_t power = kPrefixes.find(lower[0]);
  if (power == std::string_view::npos) return 0;
  const std::string_view rest = std::string_view(lower).substr(1);
  uint64_t base = 0;
  if (rest.empty() || rest == "b") base = 1024;
  if (rest == "ib") base = 1000;
  if (base == 0) return 0;
  uint64_t multiplier = 1;
  for (size_t i = 0; i <= power; ++i) multiplier *= base;
  return multiplier;
}

}  // namespace

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  if (text == "0") return std::chrono::milliseconds(0);
  auto syntax_error = [&] {
    return MakeError(ErrorCode::kParse, fmt::format(kDurationExpected, text));
  };
  if (text.empty()) return syntax_error();
  uint64_t total_ms = 0;
  bool overflow = false;
  size_t next_unit = 0;  // index into kDurationUnits of the smallest unit still allowed
  std::string_view rest = text;
  while (!rest.empty()) {
    uint64_t count = 0;
    const auto digits = ReadDigits(rest, count, overflow);
    if (!digits) return syntax_error();
    rest.remove_prefix(*digits);
    size_t unit = kDurationUnits.size();
    // "ms" before "m": the longest unit name that matches.
    for (size_t u = 0; u < kDurationUnits.size(); ++u) {
      const std::string_view name = kDurationUnits[u].name;
      if (rest.starts_with(name) &&
          (unit == kDurationUnits.size() || name.size() > kDurationUnits[unit].name.size())) {
        unit = u;
      }
    }
    if (unit == kDurationUnits.size() || unit < next_unit) return syntax_error();
    rest.remove_prefix(kDurationUnits[unit].name.size());
    next_unit = unit + 1;
    if (!MultiplyAdd(count, kDurationUnits[unit].ms, total_ms)) overflow = true;
  }
  if (overflow || total_ms > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("duration {:?} is out of range (at most 2^63-1 ms)", text));
  }
  return std::chrono::milliseconds(static_cast<std::chrono::milliseconds::rep>(total_ms));
}

std::string FormatDuration(std::chrono::milliseconds duration) {
  if (duration.count() == 0) return "0s";
  const bool negative = duration.count() < 0;
  // Unsigned negation also covers INT64_MIN, whose magnitude no int64_t holds.
  uint64_t ms = static_cast<uint64_t>(duration.count());
  if (negative) ms = 0 - ms;
  fmt::memory_buffer out;
  if (negative) out.push_back('-');
  for (const auto& unit : kDurationUnits) {
    if (ms >= unit.ms) {
      fmt::format_to(std::back_inserter(out), "{}{}", ms / unit.ms, unit.name);
      ms %= unit.ms;
    }
  }
  return fmt::to_string(out);
}

Result<uint64_t> ParseSize(std::string_view text) {
  uint64_t count = 0;
  bool overflow = false;
  const auto digits = ReadDigits(text, count, overflow);
  if (!digits) return MakeError(ErrorCode::kParse, fmt::format(kSizeExpected, text));
  const uint64_t multiplier = SizeMultiplier(text.substr(*digits));
  if (multiplier == 0) return MakeError(ErrorCode::kParse, fmt::format(kSizeExpected, text));
  uint64_t bytes = 0;
  if (overflow || !MultiplyAdd(count, multiplier, bytes)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("size {:?} is out of range (at most 2^64-1 bytes)", text));
  }
  return bytes;
}

}  // namespace iowatch
