// The one table of fio job options, as fio's own options.c: per option its
// name, alias, type, default, accepted values, a line of help, how to parse
// it into a JobSpec and how to print it back. ApplyJobOption (parsing, alias
// → option), JobOptionNames (and so the did-you-mean), ToJobOptions (and so
// JobFingerprint, which keys stored baselines) and JobOptionsHelp (`iowatch
// probe --help`, docs/commands.md) all read it, so an option added here is parsed,
// printed, fingerprinted and documented at once.
// Not part of the probes API: only probes/spec and its tests include it.
// Thread-safety: constant data and pure functions.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "probes/spec/job_option_values.h"
#include "probes/spec/job_spec.h"

namespace iowatch::probes::internal {

// fio's option types (FIO_OPT_STR_STORE, _INT, _BOOL, _STR_SET, ...) as far
// as iowatch has them; the help shows the value's syntax from it.
enum class OptionType {
  kString,    // free text
  kPath,      // one path, "\:" for a colon
  kChoice,    // one of `accepted`, '|'-separated
  kSize,      // "4k", "64KiB"
  kSizeList,  // R[,W[,T]]
  kInt,       // plain decimal
  kIntList,   // R[,W]
  kBool,      // 0 or 1 (FIO_OPT_BOOL)
  kFlag,      // bare, or =0/1 (FIO_OPT_STR_SET)
  kTime,      // "500ms", "10s"; a bare number in seconds
};

// A printed value; nullopt when there is nothing to write back (an unset
// path or seed, or an option another one carries: rwmixwrite → rwmixread).
using PrintedValue = std::optional<std::string>;

// fio's minval/maxval: the values an integer option takes, checked by
// ApplyJobOption before the option's parser runs (and by ValidateJobSpec on
// a spec built in code), and printed in the help: "1 to 4096", "0 (= iodepth)
// to 4096".
struct OptionRange {
  uint64_t min = 0;
  uint64_t max = 0;  // 0: the option has no range
  // The error's words before the range: "a count" reads "expected a count
  // from 0 to 4096"; none reads "expected 1 to 4096".
  std::string_view noun = {};
  std::string_view note = {};  // after the min, "(= iodepth)"
  bool note_in_error = false;  // the error says it too
};

struct JobOptionDef {
  std::string_view name = {};
  std::string_view alias = {};  // fio's .alias; empty when none
  OptionType type = {};
  // The printed value of a default JobSpec (fio's .def); empty when unset.
  std::string_view default_text = {};
  std::string_view accepted = {};  // values, for the help (a range says its own)
  OptionRange range = {};
  std::string_view help = {};  // one line
  // Other options it cannot go without, exactly ("ioengine=io_uring").
  std::string_view needs = {};
  // A valid value other than the default: the table-walking tests set it.
  std::string_view example = {};
  // ToJobOptions writes it even at its default (name, rw, bs, ioengine,
  // iodepth, direct: every canonical text has carried them).
  bool always_printed = false;
  OptionCheck (*parse)(JobSpec& spec, std::string_view value) = nullptr;
  PrintedValue (*print)(const JobSpec& spec) = nullptr;  // null: never written back
};

// Every option, in canonical order (the order ToJobOptions writes).
std::span<const JobOptionDef> JobOptionTable();

// The option `name` is or is an alias of; null when none.
const JobOptionDef* FindJobOption(std::string_view name);

// Whether `spec` sets the option: its printed value is there and is not the
// default's (ToJobOptions writes just those, and the engine check refuses
// just those: an io_uring option left at 0 is no option).
bool SetsOption(const JobOptionDef& def, const JobSpec& spec);

// The engine the option's `needs` names ("ioengine=io_uring" → kIoUring);
// nullopt when it names none, and so goes with every engine.
std::optional<EngineKind> RequiredEngine(const JobOptionDef& def);

// The help's text of a range: "0 (= iodepth) to 4096".
std::string RangeText(const OptionRange& range);
// `value` (the text given, or a number a spec holds) within the option's
// range; the error: "expected a count from 0 to 4096, found \"4097\"".
OptionCheck CheckInRange(const OptionRange& range, std::string_view value);
// The range of the option `name` (which must have one).
const OptionRange& RangeOf(std::string_view name);

}  // namespace iowatch::probes::internal
