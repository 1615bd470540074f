// iowatch: one binary, subcommands. This file only parses the top-level
// command line and dispatches; each subcommand lives in its own file.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "daemon/global_options.h"
#include "daemon/iostat_command.h"
#include "daemon/version.h"
#include "daemon/vmstat_command.h"

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
  app.set_version_flag("--version", std::string("iowatch ") + kVersion);
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
  for (CLI::App* sub : {iostat, vmstat}) {
    sub->allow_extras();
    AddGlobalOptions(*sub, global);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (iostat->parsed()) return RunIostat(global, Passthrough(iostat));
  if (vmstat->parsed()) return RunVmstat(global, Passthrough(vmstat));
  return 2;
}
