// The value syntaxes of fio's job options, as job_spec.cc reads them and
// job_options_text.cc writes them back: sizes ("4k", "64KiB"), fio times
// ("500ms", "10s"), 0/1 booleans, plain decimal counts, percentages, one
// path with "\:" for a colon, bs=R[,W[,T]] and rate_iops=R[,W]. A parser
// returns what was expected, without the option name, which
// ApplyJobOption puts in front (an alias stays an alias in the message).
// Not part of the probes API: only job_spec.cc, job_option_values.cc and
// job_options_text.cc include it.
// Thread-safety: pure functions and constants.
#pragma once

#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "probes/spec/job_spec.h"

namespace iowatch::probes::internal {

using OptionProblem = std::unexpected<std::string>;
using OptionCheck = std::expected<void, std::string>;

// "<what>, found \"<value>\"" (the value quoted and escaped).
std::string Found(std::string_view what, std::string_view value);

// Plain decimal digits only: fio would also take "1k" or "0x10" for counts,
// but what we accept must mean the same in fio and nothing more.
template <typename T>
std::optional<T> ParseUnsigned(std::string_view text) {
  T value{};
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// A size in fio's syntax (common/units.h): "4k", "64KiB", "1m".
std::expected<uint64_t, std::string> ParseSizeValue(std::string_view text);
// fio's FIO_OPT_BOOL (direct, randrepeat): "0" or "1" only.
std::expected<bool, std::string> ParseBool01(std::string_view text);
// 0 to 100, into `out`.
OptionCheck ParsePercentage(std::string_view text, uint32_t& out);
// One path; "\:" is a literal colon, a bare ':' (fio's list separator) an
// error.
std::expected<std::string, std::string> ParseOnePath(std::string_view text);
// ParseFioTime with a bare number in seconds (runtime, ramp_time), into `out`.
OptionCheck ParseTimeValue(std::string_view text, std::chrono::nanoseconds& out);
// bs=R[,W[,T]] into spec.block_size: the parts given must be equal.
OptionCheck ParseBlockSizes(JobSpec& spec, std::string_view text);
// rate_iops=R[,W] into spec.rate_iops_read/write; an empty part leaves that
// direction as it was.
OptionCheck ParseRateIops(JobSpec& spec, std::string_view text);

// The range checks ApplyJobOption and ValidateJobSpec share; `text` is what
// the message quotes.
OptionCheck CheckName(std::string_view text);                              // non-empty, no '/'
OptionCheck CheckBlockSizeInRange(uint64_t bytes, std::string_view text);  // 1 byte to 64m
OptionCheck CheckIodepthInRange(uint64_t depth, std::string_view text);    // 1 to 4096

// fio's time units, largest first (the order FormatTime relies on);
// ParseFioTime looks a unit up by name.
struct TimeUnit {
  std::string_view name;
  std::chrono::nanoseconds length;
};
inline constexpr std::array<TimeUnit, 8> kTimeUnits{{
    {"d", std::chrono::hours(24)},
    {"h", std::chrono::hours(1)},
    {"m", std::chrono::minutes(1)},
    {"s", std::chrono::seconds(1)},
    {"ms", std::chrono::milliseconds(1)},
    {"msec", std::chrono::milliseconds(1)},
    {"us", std::chrono::microseconds(1)},
    {"usec", std::chrono::microseconds(1)},
}};

}  // namespace iowatch::probes::internal
