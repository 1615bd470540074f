#include "probes/spec/job_option_table.h"

#include <algorithm>
#include <array>

#include "probes/spec/job_option_fields.h"

namespace iowatch::probes::internal {
namespace {

// iodepth's bound, and its batches': the engines size their rings and slot
// tables by it.
constexpr uint64_t kMaxIodepth = 4096;

OptionCheck ParseName(JobSpec& spec, std::string_view value) {
  if (auto ok = CheckName(value); !ok) return ok;
  spec.name = value;
  return {};
}

// fio's "rw=read:8k": a size added to each next sequential offset (holes;
// "read:-8k" with bs=4k reads backward). fio's suffix on a random mode is a
// different thing (ddir_seq_nr), not implemented: refused.
OptionCheck ParseRwSuffix(JobSpec& spec, std::string_view mode, std::string_view value) {
  const std::string_view suffix = value.substr(mode.size() + 1);
  const bool negative = suffix.starts_with('-');
  const auto bytes = ParseSizeValue(negative ? suffix.substr(1) : suffix);
  if (!bytes || *bytes > kMaxSequenceAdd) {
    return OptionProblem(fmt::format(
        "expected a size up to 1g after \"{}:\", such as \"{}:8k\" or \"{}:-8k\", found {:?}", mode,
        mode, mode, value));
  }
  if (IsRandom(spec.rw)) {
    return OptionProblem(fmt::format(
        "expected a sequential mode (read, write, rw) before \":N\" (fio's {}:N, ddir_seq_nr, "
        "is not supported), found {:?}",
        mode, value));
  }
  spec.rw_sequence_add = negative ? -static_cast<int64_t>(*bytes) : static_cast<int64_t>(*bytes);
  return {};
}

OptionCheck ParseRw(JobSpec& spec, std::string_view value) {
  const size_t colon = value.find(':');
  const std::string_view mode = value.substr(0, colon);
  const std::optional<RwMode> rw = ValueIn<RwMode>(kRwModes, mode);
  if (!rw)
    return OptionProblem(fmt::format("expected one of {}, each with an optional \":N\", found {:?}",
                                     kRwNames, value));
  spec.rw = *rw;
  spec.rw_sequence_add = 0;
  if (colon == std::string_view::npos) return {};
  return ParseRwSuffix(spec, mode, value);
}

PrintedValue PrintRw(const JobSpec& spec) {
  std::string text(ToString(spec.rw));
  if (spec.rw_sequence_add == 0) return text;
  const uint64_t magnitude = spec.rw_sequence_add < 0 ? static_cast<uint64_t>(-spec.rw_sequence_add)
                                                      : static_cast<uint64_t>(spec.rw_sequence_add);
  return fmt::format("{}:{}{}", text, spec.rw_sequence_add < 0 ? "-" : "", FormatSize(magnitude));
}

OptionCheck ParseEngine(JobSpec& spec, std::string_view value) {
  const std::optional<EngineKind> engine = ValueIn<EngineKind>(kEngines, value);
  if (!engine) {
    return OptionProblem(Found(fmt::format("expected one of {}", kEngineNames), value));
  }
  spec.engine = *engine;
  return {};
}

OptionCheck ParseRwmixwrite(JobSpec& spec, std::string_view value) {
  // In range: ApplyJobOption checked it against the row.
  spec.rwmixread = 100 - ParseUnsigned<uint32_t>(value).value_or(0);
  return {};
}

OptionCheck ParseRandseed(JobSpec& spec, std::string_view value) {
  const auto number = ParseUnsigned<uint64_t>(value);
  if (!number) return OptionProblem(Found("expected an integer from 0 to 2^64-1", value));
  spec.randseed = number;
  return {};
}

// RequiredEngine reads the engine from it: the check that refuses the option
// with another engine (ValidateJobSpec) and the help's "needs" are this text.
constexpr std::string_view kIoUringOnly = "ioengine=io_uring";

// The order is the canonical one: ToJobOptions writes in it, so it is part
// of every stored fingerprint. New options go at the end.
constexpr std::array<JobOptionDef, 33> kTable{{
    {.name = "name",
     .type = OptionType::kString,
     .default_text = "iowatch",
     .accepted = "non-empty, no '/'",
     .help = "the job's name; under directory, the probe file is NAME.0.0",
     .example = "seq",
     .always_printed = true,
     .parse = ParseName,
     .print = [](const JobSpec& s) -> PrintedValue { return s.name; }},
    {.name = "filename",
     .type = OptionType::kPath,
     .accepted = R"(one path; "\:" for a colon)",
     .help = "the file or block device to probe (filename or directory, not both)",
     .example = "/dev/sdb",
     .parse = ParsePathInto<&JobSpec::filename>,
     .print = PrintPath<&JobSpec::filename>},
    {.name = "directory",
     .type = OptionType::kPath,
     .accepted = R"(one path; "\:" for a colon)",
     .help = "probe PATH/NAME.0.0, created and filled by iowatch (needs size)",
     .example = "/var/lib/iowatch",
     .parse = ParsePathInto<&JobSpec::directory>,
     .print = PrintPath<&JobSpec::directory>},
    {.name = "rw",
     .alias = "readwrite",
     .type = OptionType::kChoice,
     .default_text = "read",
     .accepted = kRwChoices,
     .help = "the I/O pattern: sequential or random reads, writes, or a mix (rwmixread); read:N "
             "adds N bytes to each next offset (read:-8k with bs=4k reads backward)",
     .example = "randrw",
     .always_printed = true,
     .parse = ParseRw,
     .print = PrintRw},
    {.name = "bs",
     .alias = "blocksize",
     .type = OptionType::kSizeList,
     .default_text = "4k",
     .accepted = "1 byte to 64m; the parts given must be equal",
     .help = "the size of every I/O (read,write,trim)",
     .example = "64k",
     .always_printed = true,
     .parse = ParseBlockSizes,
     .print = PrintSize<&JobSpec::block_size>},
    {.name = "ioengine",
     .type = OptionType::kChoice,
     .default_text = NameIn<EngineKind>(kEngines, EngineKind::kPsync),
     .accepted = kEngineChoices,
     .help = "how I/O is issued: io_uring or libaio (asynchronous), psync (pread/pwrite), null "
             "(no I/O)",
     .example = NameIn<EngineKind>(kEngines, EngineKind::kIoUring),
     .always_printed = true,
     .parse = ParseEngine,
     .print = [](const JobSpec& s) -> PrintedValue { return std::string(ToString(s.engine)); }},
    {.name = "iodepth",
     .type = OptionType::kInt,
     .default_text = "1",
     .range = {.min = 1, .max = kMaxIodepth},
     .help = "I/Os in flight (psync and null run at 1, as in fio)",
     .example = "32",
     .always_printed = true,
     .parse = ParseCountInto<uint32_t, &JobSpec::iodepth>,
     .print = PrintNumber<uint32_t, &JobSpec::iodepth>},
    {.name = "direct",
     .type = OptionType::kBool,
     .default_text = "0",
     .help = "O_DIRECT: measure the device, not the page cache",
     .example = "1",
     .always_printed = true,
     .parse = ParseBoolInto<&JobSpec::direct>,
     .print = PrintBool<&JobSpec::direct>},
    {.name = "iodepth_batch_submit",
     .alias = "iodepth_batch",
     .type = OptionType::kInt,
     .default_text = "1",
     .range = {.min = 0,
               .max = kMaxIodepth,
               .noun = "a count",
               .note = "(= iodepth)",
               .note_in_error = true},
     .help = "I/Os per submission",
     .example = "8",
     .parse = ParseCountInto<uint32_t, &JobSpec::iodepth_batch_submit>,
     .print = PrintNumber<uint32_t, &JobSpec::iodepth_batch_submit>},
    {.name = "iodepth_batch_complete_min",
     .alias = "iodepth_batch_complete",
     .type = OptionType::kInt,
     .default_text = "1",
     .range = {.min = 0, .max = kMaxIodepth, .noun = "a count"},
     .help = "when the queue is full, wait for at least this many completions",
     .example = "4",
     .parse = ParseCountInto<uint32_t, &JobSpec::iodepth_batch_complete_min>,
     .print = PrintNumber<uint32_t, &JobSpec::iodepth_batch_complete_min>},
    {.name = "iodepth_batch_complete_max",
     .type = OptionType::kInt,
     .default_text = "0",
     .range = {.min = 0, .max = kMaxIodepth, .noun = "a count", .note = "(= the min)"},
     .help = "completions taken per reap",
     .example = "16",
     .parse = ParseCountInto<uint32_t, &JobSpec::iodepth_batch_complete_max>,
     .print = PrintNumber<uint32_t, &JobSpec::iodepth_batch_complete_max>},
    {.name = "size",
     .type = OptionType::kSize,
     .default_text = "0",
     .accepted = "0 = the file's or device's size",
     .help = "the region probed",
     .example = "1g",
     .parse = ParseSizeInto<&JobSpec::size>,
     .print = PrintSize<&JobSpec::size>},
    {.name = "offset",
     .alias = "fileoffset",
     .type = OptionType::kSize,
     .default_text = "0",
     .help = "where the region starts",
     .example = "1m",
     .parse = ParseSizeInto<&JobSpec::offset>,
     .print = PrintSize<&JobSpec::offset>},
    {.name = "io_size",
     .alias = "io_limit",
     .type = OptionType::kSize,
     .default_text = "0",
     .accepted = "0 = size",
     .help = "bytes to transfer before the job ends",
     .example = "512m",
     .parse = ParseSizeInto<&JobSpec::io_size>,
     .print = PrintSize<&JobSpec::io_size>},
    {.name = "number_ios",
     .type = OptionType::kInt,
     .default_text = "0",
     .accepted = "0 = no limit",
     .help = "I/Os to issue before the job ends",
     .example = "1000",
     .parse = ParseCountInto<uint64_t, &JobSpec::number_ios>,
     .print = PrintNumber<uint64_t, &JobSpec::number_ios>},
    {.name = "runtime",
     .alias = "timeout",
     .type = OptionType::kTime,
     .default_text = "0",
     .accepted = "0 = until the I/O amount is done",
     .help = "how long the job runs, after ramp_time",
     .example = "30s",
     .parse = ParseTimeInto<&JobSpec::runtime>,
     .print = PrintTime<&JobSpec::runtime>},
    {.name = "time_based",
     .type = OptionType::kFlag,
     .default_text = "0",
     .help = "run for the whole runtime, repeating the region (needs runtime)",
     .example = "",
     .parse = ParseFlagInto<&JobSpec::time_based>,
     .print = [](const JobSpec& s) { return FlagText(s.time_based); }},
    {.name = "ramp_time",
     .type = OptionType::kTime,
     .default_text = "0",
     .help = "run this long before measuring",
     .example = "2s",
     .parse = ParseTimeInto<&JobSpec::ramp_time>,
     .print = PrintTime<&JobSpec::ramp_time>},
    {.name = "rwmixread",
     .type = OptionType::kInt,
     .default_text = "50",
     .range = {.min = 0, .max = 100, .noun = "a percentage"},
     .help = "percent of reads in rw and randrw",
     .example = "70",
     .parse = ParseCountInto<uint32_t, &JobSpec::rwmixread>,
     .print = PrintNumber<uint32_t, &JobSpec::rwmixread>},
    {.name = "rwmixwrite",
     .type = OptionType::kInt,
     .default_text = "50",
     .range = {.min = 0, .max = 100, .noun = "a percentage"},
     .help = "percent of writes in rw and randrw (written as rwmixread)",
     .example = "30",
     .parse = ParseRwmixwrite},
    {.name = "rate_iops",
     .type = OptionType::kIntList,
     .default_text = "0,0",
     .accepted = "0 = unpaced; one value paces both, an empty part leaves that one",
     .help = "I/Os per second for reads,writes",
     .example = "100,50",
     .parse = ParseRateIops,
     .print = [](const JobSpec& s) -> PrintedValue {
       return fmt::format("{},{}", s.rate_iops_read, s.rate_iops_write);
     }},
    {.name = "randrepeat",
     .type = OptionType::kBool,
     .default_text = "1",
     .help = "the same random offsets every run",
     .example = "0",
     .parse = ParseBoolInto<&JobSpec::randrepeat>,
     .print = PrintBool<&JobSpec::randrepeat>},
    {.name = "randseed",
     .type = OptionType::kInt,
     .accepted = "0 to 2^64-1",
     .help = "the seed of the random offsets (unset: iowatch's fixed seed)",
     .example = "7",
     .parse = ParseRandseed,
     .print = [](const JobSpec& s) -> PrintedValue {
       if (!s.randseed) return std::nullopt;
       return std::to_string(*s.randseed);
     }},
    {.name = "fsync",
     .type = OptionType::kInt,
     .default_text = "0",
     .accepted = "0 = never",
     .help = "fsync after every N writes",
     .example = "8",
     .parse = ParseCountInto<uint32_t, &JobSpec::fsync>,
     .print = PrintNumber<uint32_t, &JobSpec::fsync>},
    {.name = "fixedbufs",
     .type = OptionType::kFlag,
     .default_text = "0",
     .help = "register the I/O buffers with the kernel (READ_FIXED/WRITE_FIXED)",
     .needs = kIoUringOnly,
     .example = "",
     .parse = ParseUringFlag<&IoUringOptions::fixedbufs>,
     .print = PrintUringFlag<&IoUringOptions::fixedbufs>},
    {.name = "registerfiles",
     .type = OptionType::kFlag,
     .default_text = "0",
     .help = "register the file with the kernel (IOSQE_FIXED_FILE)",
     .needs = kIoUringOnly,
     .example = "",
     .parse = ParseUringFlag<&IoUringOptions::registerfiles>,
     .print = PrintUringFlag<&IoUringOptions::registerfiles>},
    {.name = "sqthread_poll",
     .type = OptionType::kFlag,
     .default_text = "0",
     .help = "a kernel thread polls the submission queue (SQPOLL); implies registerfiles",
     .needs = kIoUringOnly,
     .example = "",
     .parse = ParseUringFlag<&IoUringOptions::sqthread_poll>,
     .print = PrintUringFlag<&IoUringOptions::sqthread_poll>},
    {.name = "hipri",
     .type = OptionType::kFlag,
     .default_text = "0",
     .help = "polled completions (IOPOLL): I/O fails with EOPNOTSUPP on a device without poll "
             "queues; no fsync",
     .needs = "ioengine=io_uring direct=1",
     .example = "",
     .parse = ParseUringFlag<&IoUringOptions::hipri>,
     .print = PrintUringFlag<&IoUringOptions::hipri>},
    {.name = "numjobs",
     .type = OptionType::kInt,
     .default_text = "1",
     // fio has no bound: clones are threads or processes of their own, each
     // with iodepth buffers, and a typo of 10000 would fork 10000.
     .range = {.min = 1, .max = 256, .noun = "an integer"},
     .help = "clones of this job, side by side (under directory, each its own file NAME.N.0)",
     .example = "4",
     .parse = ParseCountInto<uint32_t, &JobSpec::numjobs>,
     .print = PrintNumber<uint32_t, &JobSpec::numjobs>},
    {.name = "thread",
     .type = OptionType::kFlag,
     .default_text = "0",
     .help = "run the clones as threads of one process (default: a process each, as fio)",
     .example = "",
     .parse = ParseFlagInto<&JobSpec::thread>,
     .print = [](const JobSpec& s) { return FlagText(s.thread); }},
    {.name = "group_reporting",
     .type = OptionType::kFlag,
     .default_text = "0",
     .help = "one report for the group's jobs and clones instead of one each",
     .example = "",
     .parse = ParseFlagInto<&JobSpec::group_reporting>,
     .print = [](const JobSpec& s) { return FlagText(s.group_reporting); }},
    {.name = "stonewall",
     .alias = "wait_for_previous",
     .type = OptionType::kFlag,
     .default_text = "0",
     .help = "start after the jobs before it have ended (and begin a new reporting group)",
     .example = "",
     .parse = ParseFlagInto<&JobSpec::stonewall>,
     .print = [](const JobSpec& s) { return FlagText(s.stonewall); }},
    {.name = "new_group",
     .type = OptionType::kFlag,
     .default_text = "0",
     .help = "begin a new reporting group (running beside the jobs before it)",
     .example = "",
     .parse = ParseFlagInto<&JobSpec::new_group>,
     .print = [](const JobSpec& s) { return FlagText(s.new_group); }},
}};

}  // namespace

std::span<const JobOptionDef> JobOptionTable() { return kTable; }

const JobOptionDef* FindJobOption(std::string_view name) {
  if (name.empty()) return nullptr;
  const auto it = std::ranges::find_if(
      kTable, [&](const JobOptionDef& def) { return def.name == name || def.alias == name; });
  return it == kTable.end() ? nullptr : &*it;
}

bool SetsOption(const JobOptionDef& def, const JobSpec& spec) {
  if (def.print == nullptr) return false;
  const PrintedValue value = def.print(spec);
  return value && *value != def.default_text;
}

std::optional<EngineKind> RequiredEngine(const JobOptionDef& def) {
  constexpr std::string_view kKey = "ioengine=";
  // `needs` is "name=value" pairs separated by spaces.
  for (std::string_view rest = def.needs; !rest.empty();) {
    const std::string_view pair = rest.substr(0, rest.find(' '));
    rest.remove_prefix(std::min(rest.size(), pair.size() + 1));
    if (pair.starts_with(kKey)) return ValueIn<EngineKind>(kEngines, pair.substr(kKey.size()));
  }
  return std::nullopt;
}

std::string RangeText(const OptionRange& range) {
  return range.note.empty() ? fmt::format("{} to {}", range.min, range.max)
                            : fmt::format("{} {} to {}", range.min, range.note, range.max);
}

OptionCheck CheckInRange(const OptionRange& range, std::string_view value) {
  const auto number = ParseUnsigned<uint64_t>(value);
  if (number && *number >= range.min && *number <= range.max) return {};
  const std::string bounds =
      range.note_in_error ? RangeText(range) : fmt::format("{} to {}", range.min, range.max);
  return OptionProblem(Found(range.noun.empty()
                                 ? fmt::format("expected {}", bounds)
                                 : fmt::format("expected {} from {}", range.noun, bounds),
                             value));
}

const OptionRange& RangeOf(std::string_view name) { return FindJobOption(name)->range; }

}  // namespace iowatch::probes::internal
