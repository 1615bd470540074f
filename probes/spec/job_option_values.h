// The value syntaxes of fio's job options, read and written back: sizes
// ("4k", "64KiB"), fio times ("500ms", "10s"), 0/1 booleans, bare flags,
// plain decimal counts, percentages, one path with "\:" for a colon,
// bs=R[,W[,T]] and rate_iops=R[,W], the rw and ioengine names. A parser
// returns what was expected, without the option name, which
// ApplyJobOption puts in front (an alias stays an alias in the message).
// The option table (job_option_table.h) builds every option from these.
// Not part of the probes API: only probes/spec and its tests include it.
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

#include "common/decimal.h"
#include "common/enum_names.h"
#include "probes/spec/job_spec.h"

namespace iowatch::probes::internal {

using OptionProblem = std::unexpected<std::string>;
using OptionCheck = std::expected<void, std::string>;

// "<what>, found \"<value>\"" (the value quoted and escaped).
std::string Found(std::string_view what, std::string_view value);

// Plain decimal digits only (common/decimal.h): fio would also take "1k" or
// "0x10" for counts, but what we accept must mean the same in fio and nothing
// more.
template <typename T>
std::optional<T> ParseUnsigned(std::string_view text) {
  return ParseDecimal<T>(text);
}

// A size in fio's syntax (common/units.h): "4k", "64KiB", "1m".
std::expected<uint64_t, std::string> ParseSizeValue(std::string_view text);
// fio's FIO_OPT_BOOL (direct, randrepeat): "0" or "1" only.
std::expected<bool, std::string> ParseBool01(std::string_view text);
// fio's FIO_OPT_STR_SET (time_based, fixedbufs, ...): the bare name (an
// empty value) or "1" sets it, "0" clears it.
std::expected<bool, std::string> ParseFlag(std::string_view text);
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

// The canonical text ToJobOptions writes: the inverse of ParseOnePath
// (':' escaped as "\:"), the largest exact binary suffix ("4k", "3g"), the
// largest unit that divides a time exactly ("90s", "1500ms"; times are whole
// microseconds, fio's resolution).
std::string EscapePath(std::string_view path);
std::string FormatSize(uint64_t bytes);
std::string FormatTime(std::chrono::nanoseconds time);

// fio's names for rw and ioengine; the first spelling of a mode is fio's
// canonical one ("rw", not "readwrite").
inline constexpr std::array<EnumName<RwMode>, 7> kRwModes{{
    {RwMode::kRead, "read"},
    {RwMode::kWrite, "write"},
    {RwMode::kRandRead, "randread"},
    {RwMode::kRandWrite, "randwrite"},
    {RwMode::kReadWrite, "rw"},
    {RwMode::kReadWrite, "readwrite"},
    {RwMode::kRandReadWrite, "randrw"},
}};
inline constexpr std::array<EnumName<EngineKind>, 4> kEngines{{{EngineKind::kIoUring, "io_uring"},
                                                               {EngineKind::kLibaio, "libaio"},
                                                               {EngineKind::kPsync, "psync"},
                                                               {EngineKind::kNull, "null"}}};
static_assert(NamesEveryValue<kEngines>());

inline constexpr char kBar[] = "|";
inline constexpr char kComma[] = ", ";
inline constexpr char kRwOffsetSuffix[] = "[:N]";
// "io_uring|libaio|psync|null"; "read|write|randread|randwrite|rw|randrw[:N]".
inline constexpr std::string_view kEngineChoices = JoinedNames<kEngines, kBar, false>::kText;
inline constexpr std::string_view kRwChoices =
    JoinedNames<kRwModes, kBar, false, kRwOffsetSuffix>::kText;
// Every spelling, aliases too, for errors: "read, write, ..., readwrite, randrw".
inline constexpr std::string_view kEngineNames = JoinedNames<kEngines, kComma, true>::kText;
inline constexpr std::string_view kRwNames = JoinedNames<kRwModes, kComma, true>::kText;

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
