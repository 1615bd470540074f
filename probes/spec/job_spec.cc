#include "probes/spec/job_spec.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <utility>

#include "probes/spec/job_option_table.h"
#include "probes/spec/job_option_values.h"

namespace iowatch::probes {
namespace {

using internal::CheckBlockSizeInRange;
using internal::CheckName;
using internal::FindJobOption;
using internal::JobOptionDef;
using internal::JobOptionTable;
using internal::kEngines;
using internal::kRwModes;
using std::chrono::nanoseconds;

constexpr uint64_t kDirectAlignment = 512;  // the smallest logical block size O_DIRECT meets

// The table's names, then its aliases: a did-you-mean tie goes to the name.
std::vector<std::string_view> AllOptionNames() {
  std::vector<std::string_view> names;
  for (const JobOptionDef& def : JobOptionTable()) names.push_back(def.name);
  for (const JobOptionDef& def : JobOptionTable()) {
    if (!def.alias.empty()) names.push_back(def.alias);
  }
  return names;
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
  for (const std::string_view known : JobOptionNames()) {
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

Status Invalid(std::string message) {
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
std::string_view ToString(RwMode mode) { return NameIn<RwMode>(kRwModes, mode); }

std::string_view EngineChoices() { return internal::kEngineChoices; }

std::span<const EnumName<EngineKind>> Engines() { return kEngines; }

std::string_view ToString(EngineKind engine) { return NameIn<EngineKind>(kEngines, engine); }

std::string JobSpec::TargetPath() const {
  if (!filename.empty()) return filename;
  const std::string_view separator = directory.ends_with('/') ? "" : "/";
  return fmt::format("{}{}{}.{}.0", directory, separator, name, jobnum);  // fio's name.job.file
}

uint64_t JobSpec::IoAmount() const { return io_size != 0 ? io_size : size; }

std::span<const std::string_view> JobOptionNames() {
  static const std::vector<std::string_view> names = AllOptionNames();
  return names;
}

Status ApplyJobOption(JobSpec& spec, std::string_view name, std::string_view value) {
  const JobOptionDef* option = FindJobOption(name);
  if (option == nullptr) return Invalid(UnknownOption(name));
  // Paths and names reach the kernel cut at their first NUL byte ("/x\0y"
  // would probe /x): refused for every option, as fio's C strings cannot hold one.
  if (value.find('\0') != std::string_view::npos) {
    return Invalid(fmt::format("{}: {}", name, internal::Found("expected no NUL byte", value)));
  }
  if (option->range.max != 0) {
    if (auto ok = internal::CheckInRange(option->range, value); !ok) {
      return Invalid(fmt::format("{}: {}", name, ok.error()));
    }
  }
  if (auto ok = option->parse(spec, value); !ok) {
    return Invalid(fmt::format("{}: {}", name, ok.error()));
  }
  return {};
}

namespace {

// fio registers io_uring's options only with ioengine=io_uring and refuses
// them otherwise ("unrecognized option"), even "=0"; iowatch sees values, not
// spellings, so an option left at its default passes. Unlike fio's command
// line, ioengine may come after them (a daemon job sets it in
// defaults.options). The table's `needs` says which options are an engine's.
Status ValidateEngineOptions(const JobSpec& spec) {
  for (const JobOptionDef& def : JobOptionTable()) {
    const std::optional<EngineKind> engine = internal::RequiredEngine(def);
    if (engine && *engine != spec.engine && internal::SetsOption(def, spec)) {
      return Invalid(fmt::format("{}: an option of ioengine={}, not of ioengine={}", def.name,
                                 ToString(*engine), ToString(spec.engine)));
    }
  }
  return {};
}

// hipri is checked beyond fio, which runs it and fails: polled completions
// exist only for O_DIRECT (the kernel fails buffered reads with EOPNOTSUPP)
// and a polled ring refuses fsync (EINVAL).
Status ValidateIoUringOptions(const JobSpec& spec) {
  if (auto ok = ValidateEngineOptions(spec); !ok) return ok;
  const IoUringOptions& uring = spec.uring;
  if (uring.hipri && !spec.direct) {
    return Invalid(
        "hipri: needs direct=1 (polled completions exist only for O_DIRECT; buffered I/O fails "
        "with EOPNOTSUPP)");
  }
  if (uring.hipri && spec.fsync != 0) {
    return Invalid("hipri: a polled ring cannot fsync (the kernel refuses it with EINVAL)");
  }
  return {};
}

}  // namespace

// psync with iodepth > 1 is accepted and kept: fio runs a sync engine at depth
// 1 without complaint, and the runner clamps the same way.
Status ValidateJobSpec(const JobSpec& spec) {
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
  if (spec.rw_sequence_add != 0 && IsRandom(spec.rw)) {
    return Invalid(
        fmt::format("rw: {}:N needs a sequential mode (read, write, rw)", ToString(spec.rw)));
  }
  if (spec.direct && spec.rw_sequence_add % static_cast<int64_t>(kDirectAlignment) != 0) {
    return Invalid(
        fmt::format("rw: direct=1 needs an offset increment that is a multiple of 512 "
                    "bytes, found {}",
                    spec.rw_sequence_add));
  }
  if (spec.size != 0 && spec.size < spec.block_size) {
    return Invalid(fmt::format("size: {} bytes is less than bs ({} bytes), as fio refuses",
                               spec.size, spec.block_size));
  }
  if (!spec.directory.empty() && spec.size == 0) {
    return Invalid(
        fmt::format("size: required with directory (iowatch creates {:?})", spec.TargetPath()));
  }
  // A spec built in code, not parsed: the table's ranges all the same.
  for (const auto& [option, value] :
       {std::pair{"iodepth", spec.iodepth}, std::pair{"rwmixread", spec.rwmixread},
        std::pair{"numjobs", spec.numjobs}}) {
    if (auto ok = internal::CheckInRange(internal::RangeOf(option), std::to_string(value)); !ok) {
      return Invalid(fmt::format("{}: {}", option, ok.error()));
    }
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
  return ValidateIoUringOptions(spec);
}

Result<JobSpec> ParseJobOptions(std::span<const JobOption> options) {
  JobSpec spec;
  for (const JobOption& option : options) {
    if (auto ok = ApplyJobOption(spec, option.name, option.value); !ok) {
      return ErrorOf(ok);
    }
  }
  if (auto ok = ValidateJobSpec(spec); !ok) return ErrorOf(ok);
  return spec;
}

}  // namespace iowatch::probes
