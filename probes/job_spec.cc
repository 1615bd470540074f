#include "probes/job_spec.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>

#include "common/units.h"

namespace iowatch::probes {
namespace {

using std::chrono::nanoseconds;

// Handlers report what was expected; ApplyJobOption prefixes the option name
// as the user spelled it (an alias stays an alias in the message).
using Problem = std::unexpected<std::string>;
using Check = std::expected<void, std::string>;

constexpr uint64_t kMaxBlockSize = uint64_t{64} << 20;
constexpr uint32_t kMaxIodepth = 4096;
constexpr uint64_t kDirectAlignment = 512;  // the smallest logical block size O_DIRECT meets
constexpr char kSizeExpected[] = R"(expected a size such as "4k", "64KiB" or "1m", found {:?})";
constexpr char kRwExpected[] =
    "expected one of read, write, randread, randwrite, rw, readwrite, randrw, found {:?}";

std::string Found(std::string_view what, std::string_view value) {
  return fmt::format("{}, found {:?}", what, value);
}

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

std::expected<uint64_t, std::string> Size(std::string_view text) {
  const auto bytes = ParseSize(text);
  if (bytes) return *bytes;
  if (bytes.error().code == ErrorCode::kInvalidArgument) {
    return Problem(Found("out of range (at most 2^64-1 bytes)", text));
  }
  return Problem(fmt::format(kSizeExpected, text));
}

// fio's FIO_OPT_BOOL (direct, randrepeat) reads an integer limited to 0..1;
// fio 3.33 refuses "true", "yes", "on" and a bare name for these.
std::expected<bool, std::string> Bool01(std::string_view text) {
  if (text == "0" || text == "1") return text == "1";
  return Problem(Found("expected 0 or 1", text));
}

Check BlockSizeInRange(uint64_t bytes, std::string_view text) {
  if (bytes == 0 || bytes > kMaxBlockSize) {
    return Problem(Found("expected a block size from 1 byte to 64m", text));
  }
  return {};
}

Check IodepthInRange(uint64_t depth, std::string_view text) {
  if (depth < 1 || depth > kMaxIodepth) return Problem(Found("expected 1 to 4096", text));
  return {};
}

Check Percentage(std::string_view text, uint32_t& out) {
  const auto value = ParseUnsigned<uint32_t>(text);
  if (!value || *value > 100) return Problem(Found("expected a percentage from 0 to 100", text));
  out = *value;
  return {};
}

// fio separates several files (or directories) with ':' and reads "\:" as a
// literal colon; iowatch probes one file, so an unescaped ':' is an error
// rather than a path nobody meant.
std::expected<std::string, std::string> OnePath(std::string_view text) {
  if (text.empty()) return Problem(Found("expected a path", text));
  std::string path;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == ':') {
      path += ':';
      ++i;
    } else if (text[i] == ':') {
      return Problem(Found(
          R"(expected one path (fio separates several with ':'; write "\:" for a colon))", text));
    } else {
      path += text[i];
    }
  }
  return path;
}

std::string EscapePath(std::string_view path) {
  std::string out;
  for (char c : path) {
    if (c == ':') out += '\\';
    out += c;
  }
  return out;
}

Check Time(std::string_view text, nanoseconds& out) {
  const auto t = ParseFioTime(text, std::chrono::seconds(1));
  if (!t) return Problem(t.error().message);
  out = *t;
  return {};
}

Check NameValue(std::string_view text) {
  // The name becomes a file name under `directory`.
  if (text.empty() || text.find('/') != std::string_view::npos) {
    return Problem(Found("expected a non-empty name without '/'", text));
  }
  return {};
}

struct NamedRw {
  std::string_view name;
  RwMode mode;
};
constexpr std::array<NamedRw, 7> kRwModes{{
    {"read", RwMode::kRead},
    {"write", RwMode::kWrite},
    {"randread", RwMode::kRandRead},
    {"randwrite", RwMode::kRandWrite},
    {"rw", RwMode::kReadWrite},
    {"readwrite", RwMode::kReadWrite},
    {"randrw", RwMode::kRandReadWrite},
}};

struct NamedEngine {
  std::string_view name;
  EngineKind engine;
};
constexpr std::array<NamedEngine, 3> kEngines{{{"io_uring", EngineKind::kIoUring},
                                               {"psync", EngineKind::kPsync},
                                               {"null", EngineKind::kNull}}};

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

// bs=R[,W[,T]]: fio sizes each direction separately; JobSpec has one size,
// so every given part must be present and equal ("4k," would leave writes at
// the default 4096, which is a second size).
Check BlockSize(JobSpec& spec, std::string_view text) {
  const auto parts = SplitCommas(text);
  uint64_t bytes = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto part = Size(parts[i]);
    if (!part) return Problem(parts.size() == 1 ? part.error() : fmt::format(kSizeExpected, text));
    if (i > 0 && *part != bytes) {
      return Problem(Found("iowatch supports one block size for reads and writes", text));
    }
    bytes = *part;
  }
  if (auto ok = BlockSizeInRange(bytes, text); !ok) return ok;
  spec.block_size = bytes;
  return {};
}

// rate_iops=R[,W]: one value paces both directions; an empty part leaves that
// direction as it was (fio: "100," paces reads only, ",100" writes only).
Check RateIops(JobSpec& spec, std::string_view text) {
  const auto parts = SplitCommas(text);
  const auto problem = [&] {
    return Problem(
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

Check Apply(std::string_view option, JobSpec& spec, std::string_view value) {
  if (option == "name") {
    if (auto ok = NameValue(value); !ok) return ok;
    spec.name = value;
  } else if (option == "filename" || option == "directory") {
    auto path = OnePath(value);
    if (!path) return Problem(path.error());
    (option == "filename" ? spec.filename : spec.directory) = std::move(*path);
  } else if (option == "rw") {
    const auto it = std::ranges::find(kRwModes, value, &NamedRw::name);
    if (it == kRwModes.end()) return Problem(fmt::format(kRwExpected, value));
    spec.rw = it->mode;
  } else if (option == "bs") {
    return BlockSize(spec, value);
  } else if (option == "size" || option == "offset" || option == "io_size") {
    const auto bytes = Size(value);
    if (!bytes) return Problem(bytes.error());
    (option == "size" ? spec.size : option == "offset" ? spec.offset : spec.io_size) = *bytes;
  } else if (option == "iodepth") {
    const auto depth = ParseUnsigned<uint32_t>(value);
    if (auto ok = IodepthInRange(depth.value_or(0), value); !ok) return ok;
    spec.iodepth = *depth;
  } else if (option == "ioengine") {
    const auto it = std::ranges::find(kEngines, value, &NamedEngine::name);
    if (it == kEngines.end()) return Problem(Found("expected one of io_uring, psync, null", value));
    spec.engine = it->engine;
  } else if (option == "direct" || option == "randrepeat") {
    const auto flag = Bool01(value);
    if (!flag) return Problem(flag.error());
    (option == "direct" ? spec.direct : spec.randrepeat) = *flag;
  } else if (option == "runtime") {
    return Time(value, spec.runtime);
  } else if (option == "ramp_time") {
    return Time(value, spec.ramp_time);
  } else if (option == "time_based") {
    // fio's FIO_OPT_STR_SET: the bare name sets it, as does an integer.
    if (value != "" && value != "0" && value != "1") {
      return Problem(Found("expected no value, 0 or 1", value));
    }
    spec.time_based = value != "0";
  } else if (option == "rwmixread") {
    return Percentage(value, spec.rwmixread);
  } else if (option == "rwmixwrite") {
    uint32_t write_percent = 0;
    if (auto ok = Percentage(value, write_percent); !ok) return ok;
    spec.rwmixread = 100 - write_percent;
  } else if (option == "rate_iops") {
    return RateIops(spec, value);
  } else if (option == "randseed" || option == "number_ios") {
    const auto number = ParseUnsigned<uint64_t>(value);
    if (!number) return Problem(Found("expected an integer from 0 to 2^64-1", value));
    if (option == "randseed") {
      spec.randseed = *number;
    } else {
      spec.number_ios = *number;
    }
  } else if (option == "fsync") {
    const auto every = ParseUnsigned<uint32_t>(value);
    if (!every) return Problem(Found("expected an integer from 0 to 2^32-1", value));
    spec.fsync = *every;
  }
  return {};
}

// fio 3.33's option names, then its aliases for them (fio --cmdhelp=<name>
// lists an option's alias).
constexpr std::array<std::string_view, 21> kCanonicalNames{
    "name",       "filename",  "directory",  "rw",       "bs",         "size",       "offset",
    "iodepth",    "ioengine",  "direct",     "runtime",  "time_based", "ramp_time",  "rwmixread",
    "rwmixwrite", "rate_iops", "randrepeat", "randseed", "io_size",    "number_ios", "fsync"};
constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kAliases{{
    {"readwrite", "rw"},
    {"blocksize", "bs"},
    {"fileoffset", "offset"},
    {"timeout", "runtime"},
    {"io_limit", "io_size"},
}};

constexpr auto kOptionNames = [] {
  std::array<std::string_view, kCanonicalNames.size() + kAliases.size()> names{};
  std::ranges::copy(kCanonicalNames, names.begin());
  std::ranges::transform(kAliases, names.begin() + kCanonicalNames.size(),
                         [](const auto& alias) { return alias.first; });
  return names;
}();

// The name Apply dispatches on; empty when `name` is not an option.
std::string_view CanonicalName(std::string_view name) {
  if (std::ranges::find(kCanonicalNames, name) != kCanonicalNames.end()) return name;
  const auto alias =
      std::ranges::find(kAliases, name, &std::pair<std::string_view, std::string_view>::first);
  return alias == kAliases.end() ? std::string_view() : alias->second;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
}

std::string UnknownOption(std::string_view name) {
  std::string message = fmt::format("unknown option {:?}", name);
  std::string_view best;
  size_t best_distance = 3;  // suggest only within 2 edits
  for (const std::string_view known : kOptionNames) {
    const size_t distance = EditDistance(name, known);
    // A distance equal to the known name's length would suggest "rw" for "io".
    if (distance < best_distance && distance < known.size()) {
      best = known;
      best_distance = distance;
    }
  }
  if (!best.empty()) message += fmt::format("; did you mean {:?}?", best);
  return message;
}

Result<void> Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
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

struct TimeUnit {
  std::string_view name;
  nanoseconds length;
};
constexpr std::array<TimeUnit, 8> kTimeUnits{{
    {"d", std::chrono::hours(24)},
    {"h", std::chrono::hours(1)},
    {"m", std::chrono::minutes(1)},
    {"s", std::chrono::seconds(1)},
    {"ms", std::chrono::milliseconds(1)},
    {"msec", std::chrono::milliseconds(1)},
    {"us", std::chrono::microseconds(1)},
    {"usec", std::chrono::microseconds(1)},
}};

// The largest unit that divides `time` exactly; times are whole microseconds
// (ValidateJobSpec), fio's resolution.
std::string FormatTime(nanoseconds time) {
  if (time == nanoseconds(0)) return "0";
  for (const TimeUnit& unit : kTimeUnits) {
    if (time % unit.length == nanoseconds(0)) {
      return fmt::format("{}{}", time / unit.length, unit.name);
    }
  }
  return fmt::format("{}us", time / std::chrono::microseconds(1));
}

}  // namespace

bool IsRandom(RwMode mode) {
  return mode == RwMode::kRandRead || mode == RwMode::kRandWrite || mode == RwMode::kRandReadWrite;
}

bool ReadsData(RwMode mode) {
  return mode == RwMode::kRead || mode == RwMode::kRandRead || mode == RwMode::kReadWrite ||
         mode == RwMode::kRandReadWrite;
}

bool WritesData(RwMode mode) {
  return mode == RwMode::kWrite || mode == RwMode::kRandWrite || mode == RwMode::kReadWrite ||
         mode == RwMode::kRandReadWrite;
}

// The first spelling in kRwModes is fio's canonical one ("rw", not "readwrite").
std::string_view ToString(RwMode mode) {
  const auto it = std::ranges::find(kRwModes, mode, &NamedRw::mode);
  return it == kRwModes.end() ? "?" : it->name;
}

std::string_view ToString(EngineKind engine) {
  const auto it = std::ranges::find(kEngines, engine, &NamedEngine::engine);
  return it == kEngines.end() ? "?" : it->name;
}

std::string JobSpec::TargetPath() const {
  if (!filename.empty()) return filename;
  const std::string_view separator = directory.ends_with('/') ? "" : "/";
  return fmt::format("{}{}{}.0.0", directory, separator, name);  // fio's <name>.<job>.<file>
}

uint64_t JobSpec::IoAmount() const { return io_size != 0 ? io_size : size; }

std::span<const std::string_view> JobOptionNames() { return kOptionNames; }

Result<void> ApplyJobOption(JobSpec& spec, std::string_view name, std::string_view value) {
  const std::string_view canonical = CanonicalName(name);
  if (canonical.empty()) return Invalid(UnknownOption(name));
  if (auto ok = Apply(canonical, spec, value); !ok) {
    return Invalid(fmt::format("{}: {}", name, ok.error()));
  }
  return {};
}

// psync with iodepth > 1 is accepted and kept: fio runs a sync engine at depth
// 1 without complaint, and the runner clamps the same way.
Result<void> ValidateJobSpec(const JobSpec& spec) {
  if (auto ok = NameValue(spec.name); !ok) return Invalid("name: " + ok.error());
  if (spec.filename.empty() == spec.directory.empty()) {
    return Invalid(spec.filename.empty()
                       ? "filename or directory is required"
                       : "filename and directory are both set: filename or directory is required, "
                         "not both");
  }
  const std::string bs_text = std::to_string(spec.block_size);
  if (auto ok = BlockSizeInRange(spec.block_size, bs_text); !ok) {
    return Invalid("bs: " + ok.error());
  }
  if (spec.direct && spec.block_size % kDirectAlignment != 0) {
    return Invalid(fmt::format(
        "bs: direct=1 needs a multiple of 512 bytes, found {} (\"4KiB\" is 4000 bytes in fio; "
        "\"4k\" is 4096)",
        spec.block_size));
  }
  if (spec.size != 0 && spec.size < spec.block_size) {
    return Invalid(fmt::format("size: {} bytes is less than bs ({} bytes), as fio refuses",
                               spec.size, spec.block_size));
  }
  if (!spec.directory.empty() && spec.size == 0) {
    return Invalid(
        fmt::format("size: required with directory (iowatch creates {:?})", spec.TargetPath()));
  }
  if (auto ok = IodepthInRange(spec.iodepth, std::to_string(spec.iodepth)); !ok) {
    return Invalid("iodepth: " + ok.error());
  }
  if (spec.rwmixread > 100) {
    return Invalid(
        fmt::format("rwmixread: expected a percentage from 0 to 100, found {}", spec.rwmixread));
  }
  for (const auto& [option, time] :
       {std::pair{"runtime", spec.runtime}, std::pair{"ramp_time", spec.ramp_time}}) {
    if (time < nanoseconds(0) || time % std::chrono::microseconds(1) != nanoseconds(0)) {
      return Invalid(fmt::format("{}: expected whole microseconds (fio's resolution), found {}ns",
                                 option, time.count()));
    }
  }
  if (spec.time_based && spec.runtime == nanoseconds(0)) {
    return Invalid("time_based: needs a runtime greater than 0");
  }
  return {};
}

Result<JobSpec> ParseJobOptions(std::span<const JobOption> options) {
  JobSpec spec;
  for (const JobOption& option : options) {
    if (auto ok = ApplyJobOption(spec, option.name, option.value); !ok) {
      return std::unexpected(ok.error());
    }
  }
  if (auto ok = ValidateJobSpec(spec); !ok) return std::unexpected(ok.error());
  return spec;
}

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

std::vector<JobOption> ToJobOptions(const JobSpec& spec) {
  const JobSpec defaults;
  std::vector<JobOption> out;
  const auto add = [&](std::string_view name, std::string value) {
    out.push_back(JobOption{std::string(name), std::move(value)});
  };
  add("name", spec.name);
  if (!spec.filename.empty()) add("filename", EscapePath(spec.filename));
  if (!spec.directory.empty()) add("directory", EscapePath(spec.directory));
  add("rw", std::string(ToString(spec.rw)));
  add("bs", FormatSize(spec.block_size));
  add("ioengine", std::string(ToString(spec.engine)));
  add("iodepth", std::to_string(spec.iodepth));
  add("direct", spec.direct ? "1" : "0");
  if (spec.size != defaults.size) add("size", FormatSize(spec.size));
  if (spec.offset != defaults.offset) add("offset", FormatSize(spec.offset));
  if (spec.io_size != defaults.io_size) add("io_size", FormatSize(spec.io_size));
  if (spec.number_ios != defaults.number_ios) add("number_ios", std::to_string(spec.number_ios));
  if (spec.runtime != defaults.runtime) add("runtime", FormatTime(spec.runtime));
  if (spec.time_based) add("time_based", "");
  if (spec.ramp_time != defaults.ramp_time) add("ramp_time", FormatTime(spec.ramp_time));
  if (spec.rwmixread != defaults.rwmixread) add("rwmixread", std::to_string(spec.rwmixread));
  if (spec.rate_iops_read != 0 || spec.rate_iops_write != 0) {
    add("rate_iops", fmt::format("{},{}", spec.rate_iops_read, spec.rate_iops_write));
  }
  if (spec.randrepeat != defaults.randrepeat) add("randrepeat", spec.randrepeat ? "1" : "0");
  if (spec.randseed) add("randseed", std::to_string(*spec.randseed));
  if (spec.fsync != defaults.fsync) add("fsync", std::to_string(spec.fsync));
  return out;
}

std::string JobFingerprint(const JobSpec& spec) {
  std::string out;
  for (const JobOption& option : ToJobOptions(spec)) {
    if (option.name == "name") continue;
    if (!out.empty()) out += ';';
    out += option.name;
    out += '=';
    // Escaped so that no value can forge a separator.
    for (char c : option.value.empty() ? std::string("1") : option.value) {
      if (c == ';' || c == '\\') out += '\\';
      out += c;
    }
  }
  return out;
}

}  // namespace iowatch::probes
