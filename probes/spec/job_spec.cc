#include "probes/spec/job_spec.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

#include "probes/spec/job_option_values.h"

namespace iowatch::probes {
namespace {

using internal::CheckBlockSizeInRange;
using internal::CheckIodepthInRange;
using internal::CheckName;
using internal::Found;
using internal::OptionCheck;
using internal::OptionProblem;
using internal::ParseBlockSizes;
using internal::ParseBool01;
using internal::ParseOnePath;
using internal::ParsePercentage;
using internal::ParseRateIops;
using internal::ParseSizeValue;
using internal::ParseTimeValue;
using internal::ParseUnsigned;
using std::chrono::nanoseconds;

constexpr uint64_t kDirectAlignment = 512;  // the smallest logical block size O_DIRECT meets
constexpr char kRwExpected[] =
    "expected one of read, write, randread, randwrite, rw, readwrite, randrw, found {:?}";

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

OptionCheck Apply(std::string_view option, JobSpec& spec, std::string_view value) {
  if (option == "name") {
    if (auto ok = CheckName(value); !ok) return ok;
    spec.name = value;
  } else if (option == "filename" || option == "directory") {
    auto path = ParseOnePath(value);
    if (!path) return OptionProblem(path.error());
    (option == "filename" ? spec.filename : spec.directory) = std::move(*path);
  } else if (option == "rw") {
    const auto it = std::ranges::find(kRwModes, value, &NamedRw::name);
    if (it == kRwModes.end()) return OptionProblem(fmt::format(kRwExpected, value));
    spec.rw = it->mode;
  } else if (option == "bs") {
    return ParseBlockSizes(spec, value);
  } else if (option == "size" || option == "offset" || option == "io_size") {
    const auto bytes = ParseSizeValue(value);
    if (!bytes) return OptionProblem(bytes.error());
    (option == "size" ? spec.size : option == "offset" ? spec.offset : spec.io_size) = *bytes;
  } else if (option == "iodepth") {
    const auto depth = ParseUnsigned<uint32_t>(value);
    if (auto ok = CheckIodepthInRange(depth.value_or(0), value); !ok) return ok;
    spec.iodepth = *depth;
  } else if (option == "iodepth_batch_submit" || option == "iodepth_batch_complete_min" ||
             option == "iodepth_batch_complete_max") {
    const auto batch = ParseUnsigned<uint32_t>(value);
    if (!batch || *batch > 4096) {
      return OptionProblem(Found(option == "iodepth_batch_submit"
                                     ? "expected a count from 0 (= iodepth) to 4096"
                                     : "expected a count from 0 to 4096",
                                 value));
    }
    (option == "iodepth_batch_submit"         ? spec.iodepth_batch_submit
     : option == "iodepth_batch_complete_min" ? spec.iodepth_batch_complete_min
                                              : spec.iodepth_batch_complete_max) = *batch;
  } else if (option == "ioengine") {
    const auto it = std::ranges::find(kEngines, value, &NamedEngine::name);
    if (it == kEngines.end()) {
      return OptionProblem(Found("expected one of io_uring, psync, null", value));
    }
    spec.engine = it->engine;
  } else if (option == "direct" || option == "randrepeat") {
    const auto flag = ParseBool01(value);
    if (!flag) return OptionProblem(flag.error());
    (option == "direct" ? spec.direct : spec.randrepeat) = *flag;
  } else if (option == "runtime") {
    return ParseTimeValue(value, spec.runtime);
  } else if (option == "ramp_time") {
    return ParseTimeValue(value, spec.ramp_time);
  } else if (option == "time_based") {
    // fio's FIO_OPT_STR_SET: the bare name sets it, as does an integer.
    if (value != "" && value != "0" && value != "1") {
      return OptionProblem(Found("expected no value, 0 or 1", value));
    }
    spec.time_based = value != "0";
  } else if (option == "rwmixread") {
    return ParsePercentage(value, spec.rwmixread);
  } else if (option == "rwmixwrite") {
    uint32_t write_percent = 0;
    if (auto ok = ParsePercentage(value, write_percent); !ok) return ok;
    spec.rwmixread = 100 - write_percent;
  } else if (option == "rate_iops") {
    return ParseRateIops(spec, value);
  } else if (option == "randseed" || option == "number_ios") {
    const auto number = ParseUnsigned<uint64_t>(value);
    if (!number) return OptionProblem(Found("expected an integer from 0 to 2^64-1", value));
    if (option == "randseed") {
      spec.randseed = *number;
    } else {
      spec.number_ios = *number;
    }
  } else if (option == "fsync") {
    const auto every = ParseUnsigned<uint32_t>(value);
    if (!every) return OptionProblem(Found("expected an integer from 0 to 2^32-1", value));
    spec.fsync = *every;
  }
  return {};
}

// fio 3.33's option names, then its aliases for them (fio --cmdhelp=<name>
// lists an option's alias).
constexpr std::array<std::string_view, 24> kCanonicalNames{"name",
                                                           "filename",
                                                           "directory",
                                                           "rw",
                                                           "bs",
                                                           "size",
                                                           "offset",
                                                           "iodepth",
                                                           "ioengine",
                                                           "direct",
                                                           "runtime",
                                                           "time_based",
                                                           "ramp_time",
                                                           "rwmixread",
                                                           "rwmixwrite",
                                                           "rate_iops",
                                                           "randrepeat",
                                                           "randseed",
                                                           "io_size",
                                                           "number_ios",
                                                           "fsync",
                                                           "iodepth_batch_submit",
                                                           "iodepth_batch_complete_min",
                                                           "iodepth_batch_complete_max"};
constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kAliases{{
    {"readwrite", "rw"},
    {"iodepth_batch", "iodepth_batch_submit"},
    {"iodepth_batch_complete", "iodepth_batch_complete_min"},
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
  if (auto ok = CheckName(spec.name); !ok) return Invalid("name: " + ok.error());
  if (spec.filename.empty() == spec.directory.empty()) {
    return Invalid(spec.filename.empty()
                       ? "filename or directory is required"
                       : "filename and directory are both set: filename or directory is required, "
                         "not both");
  }
  const std::string bs_text = std::to_string(spec.block_size);
  if (auto ok = CheckBlockSizeInRange(spec.block_size, bs_text); !ok) {
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
  if (auto ok = CheckIodepthInRange(spec.iodepth, std::to_string(spec.iodepth)); !ok) {
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

}  // namespace iowatch::probes
