#include "daemon/cli/probe/probe_command.h"

#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>

#include "collectors/block_devices.h"
#include "collectors/disk_util.h"
#include "common/clock.h"
#include "common/file_tree.h"
#include "daemon/cli/cli_output.h"
#include "daemon/cli/probe/probe_format.h"
#include "daemon/cli/probe/probe_options.h"
#include "probes/run_probe.h"

namespace iowatch::daemon {
namespace {

std::atomic<bool> g_stop_requested{false};  // written by the signal handler only

extern "C" void RequestStop(int /*signal*/) { g_stop_requested.store(true); }

// SIGINT and SIGTERM end the run (partial results are still printed) instead
// of killing the process; SA_RESTART is off so a blocking wait returns.
void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = RequestStop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool ShowProgress(ProgressMode mode) {
  if (mode == ProgressMode::kAlways) return true;
  if (mode == ProgressMode::kNever) return false;
  return isatty(STDERR_FILENO) == 1;
}

int ExitStatus(probes::RunEnd end) {
  switch (end) {
    case probes::RunEnd::kCompleted:
      return 0;
    case probes::RunEnd::kInterrupted:
      return 130;
    case probes::RunEnd::kTimedOut:
    case probes::RunEnd::kFailed:
      return 1;
  }
  return 1;
}

}  // namespace

int RunProbe(const GlobalOptions& global, const std::vector<std::string>& args) {
  probes::TargetPolicy defaults;
  defaults.sysfs = global.sysfs;
  auto options = ParseProbeArgs(args, defaults);
  if (!options) return ReportError("probe", options.error());
  if (options->help) {
    if (Status w = WriteStdout(ProbeUsage()); !w) return ReportError("probe", w.error());
    return 0;
  }
  const probes::JobSpec& spec = options->spec;

  InstallStopHandlers();
  const bool progress = ShowProgress(options->progress);
  probes::ProbeRunOptions run;
  run.policy = options->policy;
  run.run.cancel = &g_stop_requested;
  if (progress) {
    run.run.on_progress = [](const probes::RunProgress& p) {
      // Progress is best effort: a stderr that fails loses only the progress line.
      (void)std::fprintf(stderr, "\r%s\033[K", FormatProgressLine(p).c_str());
      (void)std::fflush(stderr);
    };
  }
  // fio's disk_util: the target's whole disk, read when the measured phase
  // starts and when the run is over.
  const FileTree sysfs(global.sysfs);
  std::optional<collectors::BlockDevice> disk;
  std::optional<collectors::DiskCounters> disk_before;
  double before_seconds = 0;
  run.on_prepared = [&](dev_t device) {
    disk = collectors::FindWholeDisk(sysfs, major(device), minor(device));
  };
  run.run.on_measuring = [&] {
    if (!disk) return;
    if (auto counters = collectors::ReadDeviceCounters(sysfs, disk->major, disk->minor)) {
      disk_before = *counters;
      before_seconds = MonotonicSeconds();
    }
  };
  auto outcome = probes::RunProbe(spec, run);
  if (progress) (void)std::fputs("\r\033[K", stderr);
  if (!outcome) return ReportError("probe", outcome.error());
  const probes::ProbeResult& result = outcome->result;

  ProbeReportContext context{options->job,           outcome->target_path,   major(outcome->device),
                             minor(outcome->device), outcome->start_unix_ms, std::nullopt};
  if (disk_before) {
    if (auto after = collectors::ReadDeviceCounters(sysfs, disk->major, disk->minor)) {
      context.disk_util = collectors::ComputeDiskUtil(disk->name, *disk_before, *after,
                                                      (MonotonicSeconds() - before_seconds) * 1000);
    }
  }
  if (Status w = WriteStdout(options->format == ProbeOutputFormat::kJson
                                 ? FormatProbeJson(result, context)
                                 : FormatProbeNormal(result, context));
      !w) {
    return ReportError("probe", w.error());
  }
  if (result.error) (void)ReportError("probe", *result.error);
  return ExitStatus(result.end);
}

}  // namespace iowatch::daemon
