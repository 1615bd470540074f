#include "cli/command_table.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <string_view>

#include "cli/advise/advise_command.h"
#include "cli/baseline/baseline_command.h"
#include "cli/biolatency/biolatency_command.h"
#include "cli/health/health_command.h"
#include "cli/iostat/iostat_command.h"
#include "cli/iotop/iotop_command.h"
#include "cli/probe/probe_command.h"
#include "cli/sweep/sweep_command.h"
#include "cli/trace/trace_command.h"
#include "cli/vmstat/vmstat_command.h"
#include "common/version.h"
#include "daemon/sources/registry.h"
#include "probes/spec/job_spec.h"

namespace iowatch::daemon {
namespace {

constexpr std::string_view kTrace = "trace";

// Global flags are accepted before and after the subcommand name.
void AddGlobalOptions(CLI::App& app, GlobalOptions& global) {
  app.add_option("--path.procfs", global.procfs, "procfs mount point")->capture_default_str();
  app.add_option("--path.sysfs", global.sysfs, "sysfs mount point")->capture_default_str();
}

// Commands that take a foreign tool's syntax (sysstat, procps) parse the
// arguments CLI11 does not know themselves; the global flags are CLI11's.
void DefineReport(CLI::App& sub, CommandLine& line) {
  sub.allow_extras();
  AddGlobalOptions(sub, line.global);
}

// Every argument after the name is the command's, --help too: it is answered
// from the command's own option table (probe's fio options, ...).
void DefineOwnParser(CLI::App& sub, CommandLine& /*line*/) {
  sub.allow_extras();
  sub.prefix_command();
  sub.set_help_flag();
}

// The arguments CLI11 left to the command, in order.
template <int (*kRun)(const GlobalOptions&, const std::vector<std::string>&)>
int RunWithArgs(const CLI::App& sub, CommandLine& line) {
  return kRun(line.global, sub.remaining());
}

// Each flag of serve is set only when given: the config file's value stands otherwise.
void DefineServe(CLI::App& sub, CommandLine& line) {
  const auto optional_flag = [&sub](const char* name, auto& target, const char* help) {
    sub.add_option_function<std::string>(
        name, [&target](const std::string& value) { target = value; }, help);
  };
  ServeFlags& flags = line.serve_flags;
  optional_flag("--config.file", flags.config_file,
                "YAML config file (default: built-in defaults)");
  optional_flag("--web.listen-address", flags.listen_address,
                "address to serve on, e.g. 127.0.0.1:9860 or :9860");
  optional_flag("--state.dir", flags.state_dir, "directory for iowatch's own state");
  optional_flag("--log.level", flags.log_level, "trace, debug, info, warn, error or off");
  optional_flag("--path.procfs", flags.procfs, "procfs mount point (default /proc)");
  optional_flag("--path.sysfs", flags.sysfs, "sysfs mount point (default /sys)");
  optional_flag("--path.udev.data", flags.udev_data, "udev database path (default /run/udev/data)");
}

void DefineCheckConfig(CLI::App& sub, CommandLine& line) {
  sub.add_option("file", line.check_file, "the YAML file")->required();
}

void DefineBaseline(CLI::App& sub, CommandLine& line) {
  DefineBaselineCommand(sub, line.baseline_args);
}

int RunServeCommand(const CLI::App& sub, CommandLine& line) {
  return RunServe(ServeFlagsOf(*sub.get_parent(), line));
}

int RunTraceCommand(const CLI::App& sub, CommandLine& line) {
  return RunTrace(TraceArgs(sub, line));
}

int RunBaselineCommand(const CLI::App& /*sub*/, CommandLine& line) {
  return RunBaseline(line.baseline_args, RegisteredSettings());
}

int RunCheckConfigCommand(const CLI::App& /*sub*/, CommandLine& line) {
  return RunCheckConfig(line.check_file);
}

std::string ProbeHelp() {
  return fmt::format(
      "measure a file or device with one fio-style job (fio's option names: --rw --bs --size "
      "--iodepth --ioengine={} --direct --runtime --time_based ...; "
      "--output-format=normal|json; every option: iowatch probe --help)",
      probes::EngineChoices());
}

// The argument count app.parse() is to see: up to trace's "--", whose
// command goes into `command`.
int SplitTraceCommand(int argc, char** argv, std::vector<std::string>& command) {
  bool trace = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == kTrace) trace = true;
    if (arg == "--" && trace) {
      command.assign(argv + i + 1, argv + argc);
      return i;
    }
  }
  return argc;
}

// The reports: a system's figures, as the reference tools print them.
std::vector<Command> ReportCommands() {
  return {
      {.name = "iostat",
       .help = "CPU and device I/O statistics, as sysstat's iostat (options: -c -d -x -k -m -N "
               "-p [dev,...|ALL] -y -z -t -o JSON [dev...|ALL] [interval [count]])",
       .define = DefineReport,
       .run = RunWithArgs<RunIostat>},
      {.name = "vmstat",
       .help = "virtual memory statistics, as procps' vmstat (options: -a -w -S k|K|m|M -t -n "
               "[delay [count]])",
       .define = DefineReport,
       .run = RunWithArgs<RunVmstat>},
      {.name = "iotop",
       .help = "the cgroups (services, slices) doing the most I/O, as /metrics counts them "
               "(options: -d DEV -o JSON --depth N [interval [count]])",
       .define = DefineReport,
       .run = RunWithArgs<RunIotop>},
      {.name = "biolatency",
       .help = "the block layer's request latency per disk and op, from a BPF program (root or "
               "CAP_BPF + CAP_PERFMON; options: -d DEV -Q -o JSON [interval [count]])",
       .define = DefineReport,
       .run = RunWithArgs<RunBiolatency>},
  };
}

// The tools: probes, sweeps, advice, health, traces.
std::vector<Command> ToolCommands() {
  return {
      {.name = "probe",
       .help = ProbeHelp(),
       .define = DefineOwnParser,
       .run = RunWithArgs<RunProbeCommand>},
      {.name = "sweep",
       .help = "characterise a device: a grid of probe runs (bs x iodepth x rw x pattern x "
               "buffered/direct/raw) in a time budget, with the knee and latency-optimal depth; "
               "table, JSON or SVG; stored, --list, --compare A B (every option: iowatch sweep "
               "--help)",
       .define = DefineOwnParser,
       .run = RunWithArgs<RunSweep>},
      {.name = "advise",
       .help = "stripe geometry, queue settings, partition alignment and filesystem stripe hints "
               "set against the request sizes each disk receives, as findings with the change to "
               "make (options: -o JSON --interval SECONDS [dev...])",
       .define = DefineReport,
       .run = RunWithArgs<RunAdvise>},
      {.name = "health",
       .help = "each disk's story: identity, SMART verdict and the attributes that matter, the "
               "kernel log's I/O errors since boot, its filesystems (used %, inodes, read-only, "
               "errors) and its probe verdicts; md arrays, thin pools, NVMe controllers, multipath "
               "maps and ZFS pools; exit 1 when something is failing (options: -d DEV -o JSON "
               "--state.dir DIR --path.udev.data DIR --smart-timeout SECONDS --no-smart)",
       .define = DefineReport,
       .run = RunWithArgs<RunHealth>},
      {.name = std::string(kTrace),
       .help = "run a command with libiowatch-trace.so preloaded and report what it did to each "
               "file (calls, bytes, request sizes, time, sequential/backward/random), MIO-style; "
               "--what-if replays it with 2 MiB asynchronous direct I/O (every option: iowatch "
               "trace --help)",
       .define = DefineOwnParser,
       .run = RunTraceCommand},
  };
}

// The baselines, the daemon and its config.
std::vector<Command> DaemonCommands() {
  return {
      {.name = "baseline",
       .help = {},  // DefineBaselineCommand makes it from the actions' synopses
       .define = DefineBaseline,
       .run = RunBaselineCommand,
       .exit_on_parse_error = ExitBaseline},
      {.name = "serve",
       .help = "run the daemon: sample every interval and serve /metrics, / and /healthz",
       .define = DefineServe,
       .run = RunServeCommand},
      {.name = "check-config",
       .help = "validate a config file; exit 0 or 2",
       .define = DefineCheckConfig,
       .run = RunCheckConfigCommand},
  };
}

}  // namespace

std::vector<Command> Commands() {
  std::vector<Command> all;
  for (auto group : {ReportCommands, ToolCommands, DaemonCommands}) {
    for (Command& command : group()) all.push_back(std::move(command));
  }
  return all;
}

void AddCommands(CLI::App& app, const std::vector<Command>& commands, CommandLine& line) {
  app.require_subcommand(1);
  AddGlobalOptions(app, line.global);
  for (const Command& command : commands) {
    command.define(*app.add_subcommand(command.name, command.help), line);
  }
}

void ParseCommandLine(CLI::App& app, int argc, char** argv, CommandLine& line) {
  app.parse(SplitTraceCommand(argc, argv, line.trace_command), argv);
}

int RunChosen(CLI::App& app, const std::vector<Command>& commands, CommandLine& line) {
  for (const Command& command : commands) {
    const CLI::App* sub = app.get_subcommand(command.name);
    if (sub->parsed()) return command.run(*sub, line);
  }
  return 2;
}

int ExitOnParseError(CLI::App& app, const std::vector<Command>& commands,
                     const CLI::ParseError& e) {
  for (const Command& command : commands) {
    if (command.exit_on_parse_error != nullptr && app.get_subcommand(command.name)->parsed()) {
      return command.exit_on_parse_error(app, e);
    }
  }
  return app.exit(e);
}

ServeFlags ServeFlagsOf(const CLI::App& app, const CommandLine& line) {
  ServeFlags flags = line.serve_flags;
  if (!flags.procfs && app.get_option("--path.procfs")->count() > 0) {
    flags.procfs = line.global.procfs;
  }
  if (!flags.sysfs && app.get_option("--path.sysfs")->count() > 0) {
    flags.sysfs = line.global.sysfs;
  }
  return flags;
}

std::vector<std::string> TraceArgs(const CLI::App& trace, const CommandLine& line) {
  std::vector<std::string> args = trace.remaining();
  if (!line.trace_command.empty()) {
    args.emplace_back("--");
    args.insert(args.end(), line.trace_command.begin(), line.trace_command.end());
  }
  return args;
}

int RunCommandLine(int argc, char** argv) {
  CLI::App app{"iowatch: storage telemetry for Linux hosts (iostat, vmstat, probes, Prometheus)"};
  app.set_version_flag("--version", std::string("iowatch ") + kVersion);
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

}  // namespace iowatch::daemon
