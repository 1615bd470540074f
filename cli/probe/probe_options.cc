#include "cli/probe/probe_options.h"

#include <fmt/format.h>

#include <initializer_list>
#include <utility>

#include "common/terminal_text.h"
#include "probes/spec/job_file.h"

namespace iowatch::daemon {
namespace {

struct Argument {
  std::string_view name;
  std::string_view value;
  bool has_value = false;
};

Result<Argument> SplitArgument(std::string_view arg) {
  if (!arg.starts_with("--") || arg.size() == 2) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("expected an option such as --rw=randread, found \"{}\"", TerminalText(arg)));
  }
  arg.remove_prefix(2);
  const size_t eq = arg.find('=');
  if (eq == std::string_view::npos) return Argument{arg, {}, false};
  return Argument{arg.substr(0, eq), arg.substr(eq + 1), true};
}

Result<bool> ParseFlagValue(const Argument& a) {
  if (!a.has_value || a.value == "1" || a.value == "true") return true;
  if (a.value == "0" || a.value == "false") return false;
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("--{}: expected 0 or 1, found \"{}\"", TerminalText(a.name),
                               TerminalText(a.value)));
}

// One of `choices`' names, else an error listing them as "a, b or c".
template <typename T>
Result<T> ParseChoice(const Argument& a,
                      std::initializer_list<std::pair<std::string_view, T>> choices) {
  std::string accepted;
  size_t index = 0;
  for (const auto& [name, value] : choices) {
    if (a.value == name) return value;
    if (index > 0) accepted += index + 1 == choices.size() ? " or " : ", ";
    accepted += name;
    ++index;
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   fmt::format("--{}: expected {}, found \"{}\"", TerminalText(a.name), accepted,
                               TerminalText(a.value)));
}

// iowatch's own flags (output, progress, safety, push): true when `a` was
// one, false when it is a job option.
Result<bool> TakeIowatchOption(const Argument& a, ProbeOptions& options) {
  if (a.name == "output-format") {
    const auto format = ParseChoice<ProbeOutputFormat>(
        a, {{"normal", ProbeOutputFormat::kNormal}, {"json", ProbeOutputFormat::kJson}});
    if (!format) return ErrorOf(format);
    options.format = *format;
  } else if (a.name == "eta") {
    const auto progress = ParseChoice<ProgressMode>(a, {{"auto", ProgressMode::kAuto},
                                                        {"always", ProgressMode::kAlways},
                                                        {"never", ProgressMode::kNever}});
    if (!progress) return ErrorOf(progress);
    options.progress = *progress;
  } else if (a.name == "allow-block-device" || a.name == "destructive") {
    const auto on = ParseFlagValue(a);
    if (!on) return ErrorOf(on);
    (a.name == "destructive" ? options.policy.destructive : options.policy.allow_block_device) =
        *on;
  } else if (a.name == "path.sysfs") {  // the global flag, after the subcommand
    options.policy.sysfs = a.value;
  } else {
    return TakePushOption(a.name, a.value, options.push);
  }
  return true;
}

}  // namespace

Result<ProbeOptions> ParseProbeArgs(const std::vector<std::string>& args,
                                    const probes::TargetPolicy& policy) {
  ProbeOptions options;
  options.policy = policy;
  std::vector<probes::JobOption> job;
  std::string job_file;
  for (const std::string& text : args) {
    if (text == "--help" || text == "-h") {
      ProbeOptions help;
      help.help = true;
      return help;
    }
    if (!text.starts_with("-")) {
      if (!job_file.empty()) {
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("one job file per run, found {:?} and {:?}", job_file, text));
      }
      job_file = text;
      continue;
    }
    const auto arg = SplitArgument(text);
    if (!arg) return ErrorOf(arg);
    auto taken = TakeIowatchOption(*arg, options);
    if (!taken) return ErrorOf(taken);
    if (!*taken) job.push_back({std::string(arg->name), std::string(arg->value)});
  }
  if (!job_file.empty() && !job.empty()) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("--{}: job options go in the job file {:?} (or on the command line "
                    "without one)",
                    job.front().name, job_file));
  }
  if (auto push = CheckPushOptions(options.push); !push) return ErrorOf(push);
  auto set = job_file.empty() ? probes::JobSetFromArguments(job) : probes::ReadJobFile(job_file);
  if (!set) return ErrorOf(set);
  options.jobs = std::move(*set);
  return options;
}

std::string ProbeUsage() {
  return "Usage: iowatch probe [OPTION]... --name=NAME (--filename=PATH | --directory=DIR "
         "--size=SIZE) [OPTION]... [--name=NAME2 ...]\n"
         "       iowatch probe JOBFILE.fio [IOWATCH OPTION]...\n"
         "\n"
         "Runs fio jobs, spelled as fio 3.33 spells them (names, value syntax, defaults): options\n"
         "before the first --name apply to every job, each --name begins one; or a fio job file\n"
         "([global], one [section] per job, stonewall/new_group; $pagesize, $ncpus, $mb_memory,\n"
         "${ENV} expanded).\n"
         "SIZE: \"4k\" is 4096 bytes, \"4KiB\" 4000 (fio's kb_base=1024). TIME: \"500ms\", "
         "\"10s\", \"5m\";\n"
         "a bare number is in seconds. A flag ([=0|1]) is set by its bare name.\n"
         "\n"
         "Job options:\n" +
         probes::JobOptionsHelp() +
         "\n"
         "iowatch options:\n"
         "  --output-format=normal|json, default normal\n"
         "      fio's JSON structure, or a short summary in fio's layout\n"
         "  --eta=auto|always|never, default auto\n"
         "      a one-line progress on stderr (auto: when stderr is a terminal)\n"
         "  --allow-block-device[=0|1]\n"
         "      allow a block device as filename (to read it)\n"
         "  --destructive[=0|1]\n"
         "      allow writing to a block device or to a file iowatch did not create\n" +
         PushUsage("iowatch_probe") +
         "  --help\n"
         "      this text\n";
}

}  // namespace iowatch::daemon
