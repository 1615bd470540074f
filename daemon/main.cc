// iowatch: one binary, subcommands. This file only parses the top-level
// command line and dispatches; each subcommand lives in its own file.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "common/version.h"
#include "config/config.h"
#include "daemon/cli/advise/advise_command.h"
#include "daemon/cli/baseline/baseline_command.h"
#include "daemon/cli/biolatency/biolatency_command.h"
#include "daemon/cli/global_options.h"
#include "daemon/cli/iostat/iostat_command.h"
#include "daemon/cli/iotop/iotop_command.h"
#include "daemon/cli/probe/probe_command.h"
#include "daemon/cli/sweep/sweep_command.h"
#include "daemon/cli/trace/trace_command.h"
#include "daemon/cli/vmstat/vmstat_command.h"
#include "daemon/serve/app.h"
#include "probes/spec/job_spec.h"

namespace {

// Subcommands that take a foreign tool's syntax (sysstat, procps) receive the
// arguments CLI11 does not know, in order.
std::vector<std::string> Passthrough(CLI::App* sub) { return sub->remaining(); }

// Global flags are accepted before and after the subcommand name.
void AddGlobalOptions(CLI::App& app, iowatch::daemon::GlobalOptions& global) {
  app.add_option("--path.procfs", global.procfs, "procfs mount point")->capture_default_str();
  app.add_option("--path.sysfs", global.sysfs, "sysfs mount point")->capture_default_str();
}

// The subcommands and what their flags are parsed into.
struct CommandLine {
  iowatch::daemon::GlobalOptions global;
  iowatch::daemon::BaselineArgs baseline_args;
  iowatch::daemon::ServeFlags serve_flags;
  std::string check_file;
  std::vector<std::string> trace_command;  // what follows `iowatch trace ... --`
  CLI::App* iostat = nullptr;
  CLI::App* vmstat = nullptr;
  CLI::App* iotop = nullptr;
  CLI::App* biolatency = nullptr;
  CLI::App* probe = nullptr;
  CLI::App* sweep = nullptr;
  CLI::App* advise = nullptr;
  CLI::App* trace = nullptr;
  CLI::App* baseline = nullptr;
  CLI::App* serve = nullptr;
  CLI::App* check = nullptr;
};

void AddReportCommands(CLI::App& app, CommandLine& line) {
  line.iostat = app.add_subcommand(
      "iostat",
      "CPU and device I/O statistics, as sysstat's iostat (options: -c -d -x -k -m -N "
      "-p [dev,...|ALL] -y -z -t -o JSON [dev...|ALL] [interval [count]])");
  line.vmstat = app.add_subcommand(
      "vmstat",
      "virtual memory statistics, as procps' vmstat (options: -a -w -S k|K|m|M -t -n "
      "[delay [count]])");
  line.iotop = app.add_subcommand(
      "iotop",
      "the cgroups (services, slices) doing the most I/O, as /metrics counts them (options: "
      "-d DEV -o JSON --depth N [interval [count]])");
  line.biolatency = app.add_subcommand(
      "biolatency",
      "the block layer's request latency per disk and op, from a BPF program (root or "
      "CAP_BPF + CAP_PERFMON; options: -d DEV -Q -o JSON [interval [count]])");
  line.probe = app.add_subcommand(
      "probe",
      fmt::format("measure a file or device with one fio-style job (fio's option names: --rw "
                  "--bs --size --iodepth --ioengine={} --direct --runtime --time_based ...; "
                  "--output-format=normal|json; every option: iowatch probe --help)",
                  iowatch::probes::EngineChoices()));
  line.probe->allow_extras();
  line.probe->prefix_command();
  line.probe->set_help_flag();  // `iowatch probe --help` is answered by RunProbe, from the table
  line.sweep = app.add_subcommand(
      "sweep",
      "characterise a device: a grid of probe runs (bs x iodepth x rw x pattern x "
      "buffered/direct/raw) in a time budget, with the knee and latency-optimal depth; table, "
      "JSON or SVG; stored, --list, --compare A B (every option: iowatch sweep --help)");
  line.sweep->allow_extras();
  line.sweep->prefix_command();
  line.sweep->set_help_flag();
  line.advise = app.add_subcommand(
      "advise",
      "stripe geometry, queue settings, partition alignment and filesystem stripe hints set "
      "against the request sizes each disk receives, as findings with the change to make "
      "(options: -o JSON --interval SECONDS [dev...])");
  line.trace = app.add_subcommand(
      "trace",
      "run a command with libiowatch-trace.so preloaded and report what it did to each file "
      "(calls, bytes, request sizes, time, sequential/backward/random), MIO-style; --what-if "
      "replays it with 2 MiB asynchronous direct I/O (every option: iowatch trace --help)");
  line.trace->allow_extras();
  line.trace->prefix_command();
  line.trace->set_help_flag();
  line.baseline = iowatch::daemon::AddBaselineCommand(app, line.baseline_args);
  for (CLI::App* sub : {line.iostat, line.vmstat, line.iotop, line.biolatency, line.advise}) {
    sub->allow_extras();
    AddGlobalOptions(*sub, line.global);
  }
}

void AddServeCommands(CLI::App& app, CommandLine& line) {
  line.serve = app.add_subcommand(
      "serve", "run the daemon: sample every interval and serve /metrics, / and /healthz");
  const auto optional_flag = [](CLI::App* sub, const char* name, auto& target, const char* help) {
    sub->add_option_function<std::string>(
        name, [&target](const std::string& value) { target = value; }, help);
  };
  iowatch::daemon::ServeFlags& flags = line.serve_flags;
  optional_flag(line.serve, "--config.file", flags.config_file,
                "YAML config file (default: built-in defaults)");
  optional_flag(line.serve, "--web.listen-address", flags.listen_address,
                "address to serve on, e.g. 127.0.0.1:9860 or :9860");
  optional_flag(line.serve, "--state.dir", flags.state_dir, "directory for iowatch's own state");
  optional_flag(line.serve, "--log.level", flags.log_level,
                "trace, debug, info, warn, error or off");
  optional_flag(line.serve, "--path.procfs", flags.procfs, "procfs mount point (default /proc)");
  optional_flag(line.serve, "--path.sysfs", flags.sysfs, "sysfs mount point (default /sys)");

  line.check = app.add_subcommand("check-config", "validate a config file; exit 0 or 2");
  line.check->add_option("file", line.check_file, "the YAML file")->required();
}

int Dispatch(CLI::App& app, CommandLine& line) {
  using namespace iowatch::daemon;
  if (line.serve->parsed()) {
    // --path.* given before the subcommand override the config file too.
    if (!line.serve_flags.procfs && app.get_option("--path.procfs")->count() > 0) {
      line.serve_flags.procfs = line.global.procfs;
    }
    if (!line.serve_flags.sysfs && app.get_option("--path.sysfs")->count() > 0) {
      line.serve_flags.sysfs = line.global.sysfs;
    }
    return RunServe(line.serve_flags);
  }
  if (line.check->parsed()) return RunCheckConfig(line.check_file);
  if (line.iostat->parsed()) return RunIostat(line.global, Passthrough(line.iostat));
  if (line.vmstat->parsed()) return RunVmstat(line.global, Passthrough(line.vmstat));
  if (line.iotop->parsed()) return RunIotop(line.global, Passthrough(line.iotop));
  if (line.biolatency->parsed()) {
    return RunBiolatency(line.global, Passthrough(line.biolatency));
  }
  if (line.probe->parsed()) return RunProbe(line.global, Passthrough(line.probe));
  if (line.sweep->parsed()) return RunSweep(line.global, Passthrough(line.sweep));
  if (line.advise->parsed()) return RunAdvise(line.global, Passthrough(line.advise));
  if (line.trace->parsed()) {
    std::vector<std::string> args = Passthrough(line.trace);
    if (!line.trace_command.empty()) {
      args.emplace_back("--");
      args.insert(args.end(), line.trace_command.begin(), line.trace_command.end());
    }
    return RunTrace(args);
  }
  if (line.baseline->parsed()) return RunBaseline(line.baseline_args);
  return 2;
}

// `iowatch [GLOBAL]... trace [OPTION]... -- COMMAND...`: CLI11 gives what
// follows "--" to the top level, which takes no arguments, so the command is
// cut off before parsing. Only for trace: no other subcommand has a "--".
int SplitTraceCommand(int argc, char** argv, std::vector<std::string>& command) {
  bool trace = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "trace") trace = true;
    if (arg == "--" && trace) {
      command.assign(argv + i + 1, argv + argc);
      return i;
    }
  }
  return argc;
}

int Main(int argc, char** argv) {
  CLI::App app{"iowatch: storage telemetry for Linux hosts (iostat, vmstat, probes, Prometheus)"};
  app.set_version_flag("--version", std::string("iowatch ") + iowatch::kVersion);
  app.require_subcommand(1);
  CommandLine line;
  AddGlobalOptions(app, line.global);
  AddReportCommands(app, line);
  AddServeCommands(app, line);
  try {
    app.parse(SplitTraceCommand(argc, argv, line.trace_command), argv);
  } catch (const CLI::ParseError& e) {
    if (line.baseline->parsed()) return iowatch::daemon::ExitBaseline(app, e);
    return app.exit(e);
  }
  return Dispatch(app, line);
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
