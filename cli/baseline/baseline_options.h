// The command line of `iowatch baseline` (see baseline_command.h for what
// each action does), defined once with CLI11: the binary's command table
// (cli/command_table.cc) adds it to the binary's CLI::App, and the help
// (`iowatch baseline --help`, the line in `iowatch --help`) and the usage
// errors are made from these definitions.
//
//   iowatch baseline [--state.dir=DIR] ACTION
//     list | show JOB [--runs=N] | capture JOB [--runs=N] [--device=MAJ:MIN]
//     | reset JOB | passive-reset DISK | export [FILE|-] | import FILE|-
//
// --state.dir goes anywhere after "baseline", an action's options anywhere
// after the action, as "--name=value" or "--name value" ("--name=" takes the
// next word as its value, as CLI11 does). "-" is an argument (stdin or
// stdout), not an option; "--" ends the options.
// Thread-safety: main thread only (CLI11 apps are not shared).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace CLI {
class App;
class Error;
class ParseError;
}  // namespace CLI

namespace iowatch::daemon {

enum class BaselineAction {
  kHelp,
  kList,
  kShow,
  kCapture,
  kReset,
  kPassiveReset,
  kExport,
  kImport
};

inline constexpr uint32_t kShowRunsDefault = 10;

struct BaselineArgs {
  BaselineAction action = BaselineAction::kHelp;
  std::string state_dir;         // the config file's, else config::Config's default
  std::string config_file;       // the daemon's: its state_dir and probes.baseline policy
  std::string job;               // show, capture, reset
  std::string file;              // export: "" or "-" is stdout; import: "-" is stdin
  std::optional<uint32_t> runs;  // show, capture (>= 1)
  std::string device;            // capture: "major:minor", "" for the latest run's
  std::string disk;              // passive-reset: the kernel name (sda)
};

// Makes `baseline` (added to the binary's app as "baseline") the command:
// its options, its actions and its description, the line `iowatch --help`
// shows (made from the actions' synopses); app.parse() fills `args`, which
// must outlive it. A bad command line throws CLI::ParseError, as any other.
void DefineBaselineCommand(CLI::App& baseline, BaselineArgs& args);
// Adds `baseline` to `app` and defines it.
CLI::App* AddBaselineCommand(CLI::App& app, BaselineArgs& args);

// What was wrong with a command line CLI11 refused in `baseline` (`e` is not
// a --help): one message naming the argument and what is accepted, e.g.
// `unknown action "lsit": expected list, show, capture, reset, export or import`.
Error BaselineUsageError(const CLI::App& baseline, const CLI::Error& e);
// The binary's exit on `e` in `app` (its "baseline" chosen): CLI11's --help,
// or BaselineUsageError on stderr and status 2.
int ExitBaseline(CLI::App& app, const CLI::ParseError& e);

// Parses `args` (what follows "baseline") exactly as the binary does; --help
// gives kHelp. For tests, and whoever has the words but no CLI::App.
Result<BaselineArgs> ParseBaselineArgs(const std::vector<std::string>& args);

// `iowatch baseline --help`.
std::string BaselineUsage();
std::string_view BaselineActionName(BaselineAction action);

}  // namespace iowatch::daemon
