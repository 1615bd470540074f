#include "probes/spec/job_option_values.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <vector>

#include "common/units.h"

namespace iowatch::probes {

using std::chrono::nanoseconds;

namespace internal {
namespace {

constexpr uint64_t kMaxBlockSize = uint64_t{64} << 20;
constexpr char kSizeExpected[] = R"(expected a size such as "4k", "64KiB" or "1m", found {:?})";

// Splits "a,b,c" on commas, keeping empty parts (fio: an empty part leaves
// that direction as it was).
std::vector<std::string_view> SplitCommas(std::string_view text) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string_view::npos) return parts;
    start = comma + 1;
  }
}

}  // namespace

std::string Found(std::string_view what, std::string_view value) {
  return fmt::format("{}, found {:?}", what, value);
}

std::expected<uint64_t, std::string> ParseSizeValue(std::string_view text) {
  const auto bytes = ParseSize(text);
  if (bytes) return *bytes;
  if (bytes.error().code == ErrorCode::kInvalidArgument) {
    return OptionProblem(Found("out of range (at most 2^64-1 bytes)", text));
  }
  return OptionProblem(fmt::format(kSizeExpected, text));
}

// fio's FIO_OPT_BOOL (direct, randrepeat) reads an integer limited to 0..1;
// fio 3.33 refuses "true", "yes", "on" and a bare name for these.
std::expected<bool, std::string> ParseBool01(std::string_view text) {
  if (text == "0" || text == "1") return text == "1";
  return OptionProblem(Found("expected 0 or 1", text));
}

std::expected<bool, std::string> ParseFlag(std::string_view text) {
  if (text.empty() || text == "1") return true;
  if (text == "0") return false;
  return OptionProblem(Found("expected no value, 0 or 1", text));
}

OptionCheck CheckBlockSizeInRange(uint64_t bytes, std::string_view text) {
  if (bytes == 0 || bytes > kMaxBlockSize) {
    return OptionProblem(Found("expected a block size from 1 byte to 64m", text));
  }
  return {};
}

// fio separates several files (or directories) with ':' and reads "\:" as a
// literal colon; iowatch probes one file, so an unescaped ':' is an error
// rather than a path nobody meant.
std::expected<std::string, std::string> ParseOnePath(std::string_view text) {
  if (text.empty()) return OptionProblem(Found("expected a path", text));
  std::string path;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == ':') {
      path += ':';
      ++i;
    } else if (text[i] == ':') {
      return OptionProblem(Found(
          R"(expected one path (fio separates several with ':'; write "\:" for a colon))", text));
    } else {
      path += text[i];
    }
  }
  return path;
}

OptionCheck ParseTimeValue(std::string_view text, nanoseconds& out) {
  const auto t = ParseFioTime(text, std::chrono::seconds(1));
  if (!t) return OptionProblem(t.error().message);
  out = *t;
  return {};
}

OptionCheck CheckName(std::string_view text) {
  // The name becomes a file name under `directory`.
  if (text.empty() || text.find('/') != std::string_view::npos) {
    return OptionProblem(Found("expected a non-empty name without '/'", text));
  }
  return {};
}

// bs=R[,W[,T]]: fio sizes each direction separately; JobSpec has one size,
// so every given part must be present and equal ("4k," would leave writes at
// the default 4096, which is a second size).
OptionCheck ParseBlockSizes(JobSpec& spec, std::string_view text) {
  const auto parts = SplitCommas(text);
  uint64_t bytes = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto part = ParseSizeValue(parts[i]);
    if (!part) {
      return OptionProblem(parts.size() == 1 ? part.error() : fmt::format(kSizeExpected, text));
    }
    if (i > 0 && *part != bytes) {
      return OptionProblem(Found("iowatch supports one block size for reads and writes", text));
    }
    bytes = *part;
  }
  if (auto ok = CheckBlockSizeInRange(bytes, text); !ok) return ok;
  spec.block_size = bytes;
  return {};
}

// rate_iops=R[,W]: one value paces both directions; an empty part leaves that
// direction as it was (fio: "100," paces reads only, ",100" writes only).
OptionCheck ParseRateIops(JobSpec& spec, std::string_view text) {
  const auto parts = SplitCommas(text);
  const auto problem = [&] {
    return OptionProblem(
        Found("expected I/Os per second as R or R,W (\"100\", \"100,\", \",50\")", text));
  };
  if (parts.size() > 2 || (parts.size() == 2 && parts[0].empty() && parts[1].empty())) {
    return problem();
  }
  std::array<std::optional<uint64_t>, 2> rates;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts.size() == 2 && parts[i].empty()) continue;
    rates[i] = ParseUnsigned<uint64_t>(parts[i]);
    if (!rates[i]) return problem();
  }
  if (parts.size() == 1) rates[1] = rates[0];
  if (rates[0]) spec.rate_iops_read = *rates[0];
  if (rates[1]) spec.rate_iops_write = *rates[1];
  return {};
}

std::string EscapePath(std::string_view path) {
  std::string out;
  for (char c : path) {
    if (c == ':') out += '\\';
    out += c;
  }
  return out;
}

std::string FormatSize(uint64_t bytes) {
  constexpr std::string_view kSuffixes = "kmgtp";
  std::string_view suffix;
  for (size_t i = 0; bytes != 0 && bytes % 1024 == 0 && i < kSuffixes.size(); ++i) {
    bytes /= 1024;
    suffix = kSuffixes.substr(i, 1);
  }
  return fmt::format("{}{}", bytes, suffix);
}

std::string FormatTime(nanoseconds time) {
  if (time == nanoseconds(0)) return "0";
  for (const TimeUnit& unit : kTimeUnits) {
    if (time % unit.length == nanoseconds(0)) {
      return fmt::format("{}{}", time / unit.length, unit.name);
    }
  }
  return fmt::format("{}us", time / std::chrono::microseconds(1));
}

}  // namespace internal

using internal::Found;
using internal::kTimeUnits;
using internal::ParseUnsigned;
using internal::TimeUnit;

// A bare_unit of 0 (or less) makes the unit mandatory.
Result<nanoseconds> ParseFioTime(std::string_view text, nanoseconds bare_unit) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::string unit_name;  // fio lower-cases the unit: "10S" and "10s" agree
  for (char c : text.substr(digits)) {
    unit_name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  nanoseconds unit = bare_unit;
  if (!unit_name.empty()) {
    const auto it = std::ranges::find(kTimeUnits, unit_name, &TimeUnit::name);
    unit = it == kTimeUnits.end() ? nanoseconds(0) : it->length;
  }
  if (unit_name == "sec" || unit_name == "min") {
    // fio 3.33 matches "s", "m", "h" and "d" whole and takes any other unit
    // as microseconds, so "10sec" and "1min" run for 10us and 1us there.
    return MakeError(ErrorCode::kParse,
                     Found(fmt::format(R"(expected a unit of us, ms, s, m, h or d ("{}" would be )"
                                       R"(microseconds in fio; write "{}"))",
                                       unit_name, unit_name.substr(0, 1)),
                           text));
  }
  if (digits == 0 || unit <= nanoseconds(0)) {
    return MakeError(ErrorCode::kParse,
                     Found(R"(expected a time such as "30", "500ms", "10s" or "5m" (units us, )"
                           R"(ms, s, m, h, d; a bare number is in the option's unit))",
                           text));
  }
  // Only overflow can fail now: the first `digits` characters are digits.
  const auto count = ParseUnsigned<uint64_t>(text.substr(0, digits));
  constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<nanoseconds::rep>::max());
  const auto unit_ns = static_cast<uint64_t>(unit.count());
  if (!count || *count > kMax / unit_ns) {
    return MakeError(ErrorCode::kInvalidArgument,
                     Found("out of range (at most 2^63-1 ns, about 292 years)", text));
  }
  return nanoseconds(static_cast<nanoseconds::rep>(*count * unit_ns));
}

}  // namespace iowatch::probes
