// iowatch: one binary, subcommands. This file only parses the top-level
// command line and dispatches; each subcommand lives in its own file.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "common/version.h"
#include "config/config.h"
#include "daemon/cli/baseline/baseline_command.h"
#include "daemon/cli/global_options.h"
#include "daemon/cli/iostat/iostat_command.h"
#include "daemon/cli/probe/probe_command.h"
#include "daemon/cli/vmstat/vmstat_command.h"
#include "daemon/serve/app.h"

namespace {

// Subcommands that take a foreign tool's syntax (sysstat, procps) receive the
// arguments CLI11 does not know, in order.
std::vector<std::string> Passthrough(CLI::App* sub) { return sub->remaining(); }

// Global flags are accepted before and after the subcommand name.
void AddGlobalOptions(CLI::App& app, iowatch::daemon::GlobalOptions& global) {
  app.add_option("--path.procfs", global.procfs, "procfs mount point")->capture_default_str();
  app.add_option("--path.sysfs", global.sysfs, "sysfs mount point")->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace iowatch::daemon;
  CLI::App app{"iowatch: storage telemetry for Linux hosts (iostat, vmstat, probes, Prometheus)"};
  app.set_version_flag("--version", std::string("iowatch ") + iowatch::kVersion);
  app.require_subcommand(1);
  GlobalOptions global;
  AddGlobalOptions(app, global);

  CLI::App* iostat = app.add_subcommand(
      "iostat",
      "CPU and device I/O statistics, as sysstat's iostat (options: -c -d -x -k -m -N "
      "-p [dev,...|ALL] -y -z -t -o JSON [dev...|ALL] [interval [count]])");
  CLI::App* vmstat = app.add_subcommand(
      "vmstat",
      "virtual memory statistics, as procps' vmstat (options: -a -w -S k|K|m|M -t -n "
      "[delay [count]])");
  CLI::App* probe = app.add_subcommand(
      "probe",
      "measure a file or device with one fio-style job (fio's option names: --rw --bs --size "
      "--iodepth --ioengine=io_uring|psync|null --direct --runtime --time_based ...; "
      "--output-format=normal|json; every option: iowatch probe --help)");
  probe->allow_extras();
  probe->prefix_command();
  probe->set_help_flag();  // `iowatch probe --help` is answered by RunProbe, from the option table
  BaselineArgs baseline_args;
  CLI::App* baseline = AddBaselineCommand(app, baseline_args);
  ServeFlags serve_flags;
  CLI::App* serve = app.add_subcommand(
      "serve", "run the daemon: sample every interval and serve /metrics, / and /healthz");
  const auto optional_flag = [](CLI::App* sub, const char* name, auto& target, const char* help) {
    sub->add_option_function<std::string>(
        name, [&target](const std::string& value) { target = value; }, help);
  };
  optional_flag(serve, "--config.file", serve_flags.config_file,
                "YAML config file (default: built-in defaults)");
  optional_flag(serve, "--web.listen-address", serve_flags.listen_address,
                "address to serve on, e.g. 127.0.0.1:9860 or :9860");
  optional_flag(serve, "--state.dir", serve_flags.state_dir, "directory for iowatch's own state");
  optional_flag(serve, "--log.level", serve_flags.log_level,
                "trace, debug, info, warn, error or off");
  optional_flag(serve, "--path.procfs", serve_flags.procfs, "procfs mount point (default /proc)");
  optional_flag(serve, "--path.sysfs", serve_flags.sysfs, "sysfs mount point (default /sys)");

  std::string check_file;
  CLI::App* check = app.add_subcommand("check-config", "validate a config file; exit 0 or 2");
  check->add_option("file", check_file, "the YAML file")->required();

  for (CLI::App* sub : {iostat, vmstat}) {
    sub->allow_extras();
    AddGlobalOptions(*sub, global);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (baseline->parsed()) return ExitBaseline(app, e);
    return app.exit(e);
  }
  if (serve->parsed()) {
    // --path.* given before the subcommand override the config file too.
    if (!serve_flags.procfs && app.get_option("--path.procfs")->count() > 0) {
      serve_flags.procfs = global.procfs;
    }
    if (!serve_flags.sysfs && app.get_option("--path.sysfs")->count() > 0) {
      serve_flags.sysfs = global.sysfs;
    }
    return RunServe(serve_flags);
  }
  if (check->parsed()) return RunCheckConfig(check_file);
  if (iostat->parsed()) return RunIostat(global, Passthrough(iostat));
  if (vmstat->parsed()) return RunVmstat(global, Passthrough(vmstat));
  if (probe->parsed()) return RunProbe(global, Passthrough(probe));
  if (baseline->parsed()) return RunBaseline(baseline_args);
  return 2;
}
