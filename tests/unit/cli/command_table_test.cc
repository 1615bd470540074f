// The table of subcommands: every subcommand in it once, in the order of
// `iowatch --help`; the command lines the rows' options take (global options
// before and after the name, trace's "--", serve's --path.* from either
// side); dispatch and parse errors by the table, on a table of test rows.
#include "cli/command_table.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <set>
#include <string>
#include <vector>

namespace iowatch::daemon {
namespace {

// Parses `words` (what follows the program's name) as main does.
void ParseWords(CLI::App& app, CommandLine& line, std::vector<std::string> words) {
  words.insert(words.begin(), "iowatch");
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  ParseCommandLine(app, static_cast<int>(argv.size()), argv.data(), line);
}

// The binary's table added to a fresh app, and what parsing `words` gave.
struct Parsed {
  CLI::App app;
  CommandLine line;

  explicit Parsed(std::vector<std::string> words) {
    AddCommands(app, Commands(), line);
    ParseWords(app, line, std::move(words));
  }

  const CLI::App& Sub(const std::string& name) const { return *app.get_subcommand(name); }
};

TEST(Commands, EverySubcommandOnceInHelpOrder) {
  std::vector<std::string> names;
  for (const Command& command : Commands()) {
    names.push_back(command.name);
    EXPECT_NE(command.define, nullptr) << command.name;
    EXPECT_NE(command.run, nullptr) << command.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"iostat", "vmstat", "iotop", "biolatency", "probe",
                                             "sweep", "advise", "health", "trace", "baseline",
                                             "serve", "check-config"}));
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
}

TEST(Commands, HelpListsEachWithItsLine) {
  CLI::App app;
  CommandLine line;
  const std::vector<Command> commands = Commands();
  AddCommands(app, commands, line);
  const std::string help = app.help();
  for (const Command& command : commands) {
    const std::string description = app.get_subcommand(command.name)->get_description();
    EXPECT_FALSE(description.empty()) << command.name;
    if (!command.help.empty()) {
      EXPECT_EQ(description, command.help);
    }
    EXPECT_NE(help.find("  " + command.name + " "), std::string::npos) << command.name;
    EXPECT_NE(help.find(description), std::string::npos) << command.name;
  }
  EXPECT_TRUE(app.get_subcommand("baseline")
                  ->get_description()
                  .starts_with("read and edit the probe baselines in <state.dir>/iowatch.db: "
                               "[--state.dir=DIR] list | "))
      << app.get_subcommand("baseline")->get_description();
  EXPECT_NE(app.get_subcommand("probe")->get_description().find("--ioengine=io_uring|"),
            std::string::npos);
}

TEST(Commands, ReportCommandsTakeGlobalOptionsOnEitherSideAndKeepTheirArguments) {
  for (const char* name : {"iostat", "vmstat", "iotop", "biolatency", "advise"}) {
    Parsed parsed({"--path.procfs", "/p", name, "-x", "--path.sysfs", "/s", "2", "3"});
    EXPECT_TRUE(parsed.Sub(name).parsed()) << name;
    EXPECT_EQ(parsed.line.global.procfs, "/p") << name;
    EXPECT_EQ(parsed.line.global.sysfs, "/s") << name;
    EXPECT_EQ(parsed.Sub(name).remaining(), (std::vector<std::string>{"-x", "2", "3"})) << name;
  }
  Parsed defaults({"iostat"});
  EXPECT_EQ(defaults.line.global.procfs, "/proc");
  EXPECT_EQ(defaults.line.global.sysfs, "/sys");
}

TEST(Commands, ProbeSweepAndTraceGetEveryArgumentHelpIncluded) {
  for (const char* name : {"probe", "sweep", "trace"}) {
    Parsed parsed({name, "--help", "--path.procfs", "/p", "--bs=4k"});
    EXPECT_TRUE(parsed.Sub(name).parsed()) << name;
    EXPECT_EQ(parsed.Sub(name).remaining(),
              (std::vector<std::string>{"--help", "--path.procfs", "/p", "--bs=4k"}))
        << name;
    EXPECT_EQ(parsed.line.global.procfs, "/proc") << name;
  }
}

TEST(Commands, TraceGetsTheCommandAfterItsDashes) {
  Parsed parsed({"--path.procfs", "/p", "trace", "--what-if", "--", "dd", "-x", "--", "trace"});
  EXPECT_TRUE(parsed.Sub("trace").parsed());
  EXPECT_EQ(parsed.line.global.procfs, "/p");
  EXPECT_EQ(parsed.line.trace_command, (std::vector<std::string>{"dd", "-x", "--", "trace"}));
  EXPECT_EQ(TraceArgs(parsed.Sub("trace"), parsed.line),
            (std::vector<std::string>{"--what-if", "--", "dd", "-x", "--", "trace"}));
  Parsed without({"trace", "--what-if"});
  EXPECT_TRUE(without.line.trace_command.empty());
  EXPECT_EQ(TraceArgs(without.Sub("trace"), without.line), (std::vector<std::string>{"--what-if"}));
}

TEST(Commands, ServeTakesPathsGivenBeforeItUnlessItsOwnAreGiven) {
  Parsed before({"--path.procfs", "/p", "serve", "--path.sysfs", "/s", "--log.level", "debug"});
  ServeFlags flags = ServeFlagsOf(before.app, before.line);
  EXPECT_EQ(flags.procfs, "/p");
  EXPECT_EQ(flags.sysfs, "/s");
  EXPECT_EQ(flags.log_level, "debug");
  EXPECT_FALSE(flags.config_file);
  Parsed own({"--path.procfs", "/p", "--path.sysfs", "/s", "serve", "--path.procfs", "/q"});
  flags = ServeFlagsOf(own.app, own.line);
  EXPECT_EQ(flags.procfs, "/q");
  EXPECT_EQ(flags.sysfs, "/s");
  Parsed udev({"serve", "--path.udev.data", "/u"});
  EXPECT_EQ(ServeFlagsOf(udev.app, udev.line).udev_data, "/u");
  Parsed none({"serve", "--config.file", "/etc/iowatch.yaml"});
  flags = ServeFlagsOf(none.app, none.line);
  EXPECT_FALSE(flags.procfs);  // the config file's, not the global default
  EXPECT_FALSE(flags.sysfs);
  EXPECT_FALSE(flags.udev_data);
  EXPECT_EQ(flags.config_file, "/etc/iowatch.yaml");
}

TEST(Commands, CheckConfigAndBaselineFillTheirValues) {
  Parsed check({"check-config", "/etc/iowatch.yaml"});
  EXPECT_EQ(check.line.check_file, "/etc/iowatch.yaml");
  Parsed baseline({"baseline", "show", "seq", "--state.dir", "/s", "--runs=3"});
  EXPECT_EQ(baseline.line.baseline_args.action, BaselineAction::kShow);
  EXPECT_EQ(baseline.line.baseline_args.job, "seq");
  EXPECT_EQ(baseline.line.baseline_args.state_dir, "/s");
  EXPECT_EQ(baseline.line.baseline_args.runs, 3u);
}

// A table of test rows: dispatch and parse errors as the binary's table has them.
void DefineNothing(CLI::App& /*sub*/, CommandLine& /*line*/) {}
int RunA(const CLI::App& /*sub*/, CommandLine& /*line*/) { return 11; }
int RunB(const CLI::App& /*sub*/, CommandLine& /*line*/) { return 12; }
int ExitB(CLI::App& /*app*/, const CLI::ParseError& /*e*/) { return 41; }

// The exit status of `words` with the test rows, as main has it.
int Exit(const std::vector<std::string>& words) {
  const std::vector<Command> rows = {
      {.name = "a", .help = "first", .define = DefineNothing, .run = RunA},
      {.name = "b",
       .help = "second",
       .define = DefineNothing,
       .run = RunB,
       .exit_on_parse_error = ExitB},
  };
  CLI::App app;
  CommandLine line;
  AddCommands(app, rows, line);
  try {
    ParseWords(app, line, words);
  } catch (const CLI::ParseError& e) {
    return ExitOnParseError(app, rows, e);
  }
  return RunChosen(app, rows, line);
}

TEST(CommandDispatch, RunsTheChosenRow) {
  EXPECT_EQ(Exit({"a"}), 11);
  EXPECT_EQ(Exit({"b"}), 12);
}

TEST(CommandDispatch, ParseErrorsGoToTheChosenRowsHandlerElseToCli11) {
  EXPECT_EQ(Exit({"b", "--bogus"}), 41);
  EXPECT_EQ(Exit({"a", "--bogus"}), static_cast<int>(CLI::ExitCodes::ExtrasError));
  EXPECT_EQ(Exit({}), static_cast<int>(CLI::ExitCodes::RequiredError));  // exactly one command
}

}  // namespace
}  // namespace iowatch::daemon
