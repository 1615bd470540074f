#include "cli/baseline/baseline_options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/shared/cli_output.h"
#include "common/decimal.h"
#include "common/terminal_text.h"
#include "config/config.h"
#include "probes/store/store.h"
#include "probes/verdicts/baseline.h"

namespace iowatch::daemon {
namespace {

constexpr std::string_view kSeeHelp = " (see `iowatch baseline --help`)";

struct ActionDefinition {
  BaselineAction action;
  const char* name;
  const char* help;
};
// In the order of the help.
constexpr ActionDefinition kActions[] = {
    {BaselineAction::kList, "list",
     "every baseline: job, device, params (a hash), runs, pinned, created, model"},
    {BaselineAction::kShow, "show",
     "each baseline of JOB beside its last N successful runs, '!' where worse"},
    {BaselineAction::kCapture, "capture",
     "rebuild JOB's baseline from its last N successful runs and pin it"},
    {BaselineAction::kReset, "reset", "delete JOB's baselines; the daemon learns new ones"},
    {BaselineAction::kPassiveReset, "passive-reset",
     "forget DISK's passive judge (its models and verdicts); the daemon learns it afresh"},
    {BaselineAction::kExport, "export", "every baseline as JSON"},
    {BaselineAction::kImport, "import",
     "pin an export's baselines on the jobs of their workload here, same disk model"},
};

// "a, b or c".
std::string Listed(const std::vector<std::string>& words, std::string_view last_joint) {
  if (words.size() < 2) return fmt::format("{}", fmt::join(words, ""));
  return fmt::format("{} {} {}", fmt::join(words.begin(), words.end() - 1, ", "), last_joint,
                     words.back());
}

std::string ActionNames() {
  std::vector<std::string> names;
  for (const ActionDefinition& a : kActions) names.emplace_back(a.name);
  return Listed(names, "or");
}

// A CLI11 check of an argument's text; CLI11 prefixes the message with the
// argument's name: `--runs: expected a whole number of runs, ...`.
CLI::Validator Check(std::function<bool(std::string_view)> ok, std::string expected) {
  return CLI::Validator(
      [ok = std::move(ok), expected = std::move(expected)](std::string& text) {
        return ok(text) ? std::string() : fmt::format("expected {}, found \"{}\"", expected, text);
      },
      "");
}

CLI::Validator NonEmpty(std::string expected) {
  return Check([](std::string_view text) { return !text.empty(); }, std::move(expected));
}

bool IsRuns(std::string_view text) { return ParseDecimal<uint32_t>(text).value_or(0) > 0; }

bool IsDevice(std::string_view text) {
  const size_t colon = text.find(':');
  auto digits = [](std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  return colon != std::string_view::npos && digits(text.substr(0, colon)) &&
         digits(text.substr(colon + 1));
}

void AddRuns(CLI::App& action, BaselineArgs& args, std::string help) {
  action.add_option("--runs", args.runs, std::move(help))
      ->type_name("N")
      ->check(Check(IsRuns, "a whole number of runs, at least 1"));
}

// The arguments of one action, in the order its synopsis shows them.
void AddArguments(CLI::App& action, BaselineAction kind, BaselineArgs& args) {
  if (kind == BaselineAction::kShow || kind == BaselineAction::kCapture ||
      kind == BaselineAction::kReset) {
    action.add_option("JOB", args.job, "the probe job's name")
        ->required()
        ->type_name("")
        ->check(NonEmpty("a job name"));
  }
  if (kind == BaselineAction::kPassiveReset) {
    action.add_option("DISK", args.disk, "the disk's kernel name (e.g. sda)")
        ->required()
        ->type_name("")
        ->check(NonEmpty("a disk's name"));
  }
  if (kind == BaselineAction::kExport || kind == BaselineAction::kImport) {
    const bool out = kind == BaselineAction::kExport;
    CLI::Option* file =
        action
            .add_option("FILE|-", args.file,
                        out ? "the file to write whole, or - for stdout (the default)"
                            : "the file to read, or - for stdin")
            ->type_name("")
            ->check(NonEmpty("a file name or -"));
    if (!out) file->required();
  }
  if (kind == BaselineAction::kShow) {
    AddRuns(action, args,
            fmt::format("how many of its latest successful runs (default {})", kShowRunsDefault));
  }
  if (kind == BaselineAction::kCapture) {
    AddRuns(action, args,
            fmt::format("learn from its latest N successful runs (default {})",
                        probes::BaselinePolicy{}.runs));
    action
        .add_option("--device", args.device,
                    "the device whose runs count (default: the latest run's)")
        ->type_name("MAJ:MIN")
        ->check(Check(IsDevice, "MAJOR:MINOR (e.g. 259:0)"));
  }
}

// How an action is called, from its definitions: "show JOB [--runs=N]".
std::string Synopsis(const CLI::App& action) {
  std::string out = action.get_name();
  for (const CLI::Option* option : action.get_options()) {
    if (option == action.get_help_ptr()) continue;
    const std::string name = option->get_name();
    if (!option->get_positional()) {
      out += fmt::format(" [{}={}]", name, option->get_type_name());
    } else {
      out += option->get_required() ? " " + name : " [" + name + "]";
    }
  }
  return out;
}

// CLI11's help, with the usage line first and named after the binary (not
// argv[0]), an action's description under its usage line, and the actions
// listed by their synopses.
class BaselineHelp : public CLI::Formatter {
 public:
  BaselineHelp() { label("SUBCOMMAND", "ACTION"); }

  std::string make_description(const CLI::App*) const override { return ""; }

  std::string make_usage(const CLI::App* app, std::string) const override {
    std::string name;
    for (const CLI::App* at = app; at->get_parent() != nullptr; at = at->get_parent()) {
      name = fmt::format(" {}{}", at->get_name(), name);
    }
    std::string usage = CLI::Formatter::make_usage(app, "iowatch" + name);
    // `baseline` lists its actions instead.
    if (app->get_subcommands({}).empty()) usage += "\n" + app->get_description() + "\n";
    return usage;
  }

  std::string make_subcommand(const CLI::App* action) const override {
    std::stringstream out;
    CLI::detail::format_help(out, Synopsis(*action), action->get_description(), column_width_);
    return out.str();
  }
};

// An option CLI11 did not take: another action's, one given before its
// action, or none of ours.
std::string OptionError(const CLI::App& baseline, const CLI::App* action, std::string_view word) {
  const std::string name(word.substr(0, word.find('=')));
  std::vector<std::string> owners;
  for (const CLI::App* candidate : baseline.get_subcommands({})) {
    if (candidate->get_option_no_throw(name) != nullptr) owners.push_back(candidate->get_name());
  }
  if (owners.empty()) return fmt::format("unknown option \"{}\"", TerminalText(word));
  if (action != nullptr && std::ranges::count(owners, action->get_name()) > 0) {
    return fmt::format("{} goes after the action: iowatch baseline {}", name, Synopsis(*action));
  }
  return fmt::format("{} applies to {} only", name, Listed(owners, "and"));
}

}  // namespace

std::string_view BaselineActionName(BaselineAction action) {
  for (const ActionDefinition& a : kActions) {
    if (a.action == action) return a.name;
  }
  return "help";
}

void DefineBaselineCommand(CLI::App& baseline, BaselineArgs& args) {
  baseline.formatter(std::make_shared<BaselineHelp>());  // before the actions: they inherit it
  baseline.require_subcommand(1);
  baseline
      .add_option("--state.dir", args.state_dir,
                  fmt::format("the directory of {} (default: {})", probes::Store::kFileName,
                              config::Config{}.state_dir))
      ->type_name("DIR")
      ->check(NonEmpty("a directory"));
  baseline
      .add_option("--config.file", args.config_file,
                  "the daemon's config file: its state_dir, and its probes.baseline settings to "
                  "judge runs as the daemon does (default: the built-in ones)")
      ->type_name("FILE")
      ->check(NonEmpty("a file"));
  std::vector<std::string> synopses;
  for (const ActionDefinition& definition : kActions) {
    CLI::App* action = baseline.add_subcommand(definition.name, definition.help);
    action->group("Actions");
    action->fallthrough();  // --state.dir after the action too
    action->callback([&args, kind = definition.action] { args.action = kind; });
    AddArguments(*action, definition.action, args);
    synopses.push_back(Synopsis(*action));
  }
  baseline.description(
      fmt::format("read and edit the probe baselines in <state.dir>/{}: [--state.dir=DIR] {}",
                  probes::Store::kFileName, fmt::join(synopses, " | ")));
}

CLI::App* AddBaselineCommand(CLI::App& app, BaselineArgs& args) {
  CLI::App* baseline = app.add_subcommand("baseline");
  DefineBaselineCommand(*baseline, args);
  return baseline;
}

Error BaselineUsageError(const CLI::App& baseline, const CLI::Error& e) {
  const std::vector<CLI::App*> chosen = baseline.get_subcommands();
  const CLI::App* action = chosen.empty() ? nullptr : chosen.front();
  // CLI11 quotes the arguments it refuses as they were typed.
  std::string message = TerminalText(e.what());
  // What CLI11 left over says more than its "a subcommand is required".
  const std::vector<std::string> extras = baseline.remaining();
  const auto extra = std::ranges::find_if(extras, [](const std::string& w) { return w != "--"; });
  if (extra != extras.end()) {
    if (extra->size() > 1 && extra->starts_with('-')) {
      message = OptionError(baseline, action, *extra);
    } else if (action == nullptr) {
      message =
          fmt::format("unknown action \"{}\": expected {}", TerminalText(*extra), ActionNames());
    } else {
      message = "usage: iowatch baseline " + Synopsis(*action);
    }
  } else if (e.get_name() == "RequiredError") {
    message = action == nullptr ? "expected an action: " + ActionNames()
                                : fmt::format("{}; usage: iowatch baseline {}",
                                              TerminalText(e.what()), Synopsis(*action));
  }
  return MakeError(ErrorCode::kInvalidArgument, message + std::string(kSeeHelp)).error();
}

Result<BaselineArgs> ParseBaselineArgs(const std::vector<std::string>& args) {
  CLI::App app;
  BaselineArgs out;
  CLI::App* baseline = AddBaselineCommand(app, out);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // as CLI11 takes them
  reversed.emplace_back("baseline");
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return BaselineArgs{};  // --help: kHelp
    return std::unexpected(BaselineUsageError(*baseline, e));
  }
  return out;
}

std::string BaselineUsage() {
  CLI::App app;
  BaselineArgs unused;
  return AddBaselineCommand(app, unused)->help();
}

int ExitBaseline(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == 0) return app.exit(e);  // --help: CLI11 prints it
  return ReportError("baseline", BaselineUsageError(*app.get_subcommand("baseline"), e));
}

}  // namespace iowatch::daemon
