// iowatch: one binary, subcommands. This file only parses the top-level
// command line and dispatches by the table of subcommands
// (cli/command_table.h); each subcommand lives in its own folder.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "common/version.h"
#include "cli/command_table.h"

namespace {

int Main(int argc, char** argv) {
  using namespace iowatch::daemon;
  CLI::App app{"iowatch: storage telemetry for Linux hosts (iostat, vmstat, probes, Prometheus)"};
  app.set_version_flag("--version", std::string("iowatch ") + iowatch::kVersion);
  const std::vector<Command> commands = Commands();
  CommandLine line;
  AddCommands(app, commands, line);
  try {
    ParseCommandLine(app, argc, argv, line);
  } catch (const CLI::ParseError& e) {
    return ExitOnParseError(app, commands, e);
  }
  return RunChosen(app, commands, line);
}

}  // namespace

int main(int argc, char** argv) {
  // Errors are values everywhere; what still throws (an allocation failing, a
  // library's exception nobody expected) ends here with a line, not an abort.
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    (void)std::fprintf(stderr, "iowatch: unexpected error: %s\n", e.what());
  }
  return 70;  // EX_SOFTWARE
}
