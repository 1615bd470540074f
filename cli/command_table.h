// The binary's subcommands in one table. A row is a subcommand: its name,
// its line in `iowatch --help`, what it adds to CLI11 (its options and flags)
// and how it runs once app.parse() chose it. RunCommandLine builds the
// command line from the table and dispatches by it (main.cc calls it), so a
// new subcommand is one row (and its library in cli/CMakeLists.txt), not an
// edit in three places.
// The table sits above cli/ and serve/ (its library links both): `serve` and
// `check-config` are rows as the CLI commands are.
// Thread-safety: main thread only (CLI11 apps are not shared).
#pragma once

#include <string>
#include <vector>

#include "cli/baseline/baseline_options.h"
#include "cli/shared/global_options.h"
#include "daemon/serve/app.h"

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace iowatch::daemon {

// What app.parse() fills: the global options, and the values the rows bind.
struct CommandLine {
  GlobalOptions global;
  BaselineArgs baseline_args;
  ServeFlags serve_flags;
  std::string check_file;                  // check-config FILE
  std::vector<std::string> trace_command;  // what follows `iowatch trace ... --`
};

struct Command {
  std::string name;
  // Its line in `iowatch --help`; empty for baseline, whose `define` makes it
  // from its actions' synopses (baseline_options.h).
  std::string help;
  // Adds its options and flags to `sub` (its CLI::App), bound to `line`.
  void (*define)(CLI::App& sub, CommandLine& line) = nullptr;
  // Runs it; returns the exit status.
  int (*run)(const CLI::App& sub, CommandLine& line) = nullptr;
  // The exit status when app.parse() threw once it had chosen this command;
  // none: CLI11's message and status (app.exit).
  int (*exit_on_parse_error)(CLI::App& app, const CLI::ParseError& e) = nullptr;
};

// Every subcommand, in the order `iowatch --help` lists them.
std::vector<Command> Commands();

// Makes `app` take exactly one of `commands`, adds the global options
// (--path.procfs, --path.sysfs) and then each command, their values bound to
// `line`, which must outlive app.parse().
void AddCommands(CLI::App& app, const std::vector<Command>& commands, CommandLine& line);

// app.parse() of the command line (throws CLI::ParseError as it does), once
// what follows "--" in `iowatch [GLOBAL]... trace [OPTION]... -- COMMAND...`
// is cut off into line.trace_command: CLI11 would give it to the top level,
// which takes no arguments. Only trace has a "--".
void ParseCommandLine(CLI::App& app, int argc, char** argv, CommandLine& line);

// The exit status of the command app.parse() chose: it ran, or (when parse
// threw) its parse error was reported. 2 when none was chosen.
int RunChosen(CLI::App& app, const std::vector<Command>& commands, CommandLine& line);
int ExitOnParseError(CLI::App& app, const std::vector<Command>& commands, const CLI::ParseError& e);

// The binary's whole command line: `app` built from Commands(), parsed,
// the chosen command run; its exit status. main() is this and a last catch,
// so that CLI11 is compiled here only.
int RunCommandLine(int argc, char** argv);

// What the serve and trace rows give RunServe and RunTrace, for tests.
// serve's flags, --path.* given before `serve` applied unless serve's own set
// them: they override the config file too.
ServeFlags ServeFlagsOf(const CLI::App& app, const CommandLine& line);
// trace's arguments, with "--" and the command cut off before parsing after them.
std::vector<std::string> TraceArgs(const CLI::App& trace, const CommandLine& line);

}  // namespace iowatch::daemon
