#include "cli/probe/probe_command.h"

#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cli/probe/probe_format.h"
#include "cli/probe/probe_options.h"
#include "cli/probe/probe_push.h"
#include "cli/probe/probe_report.h"
#include "cli/shared/cli_output.h"
#include "cli/shared/stop_signal.h"
#include "collectors/disk/block_devices.h"
#include "collectors/disk/disk_util.h"
#include "common/clock.h"
#include "common/file_tree.h"
#include "probes/pipeline/run_job_set.h"

namespace iowatch::daemon {
namespace {

bool ShowProgress(ProgressMode mode) {
  if (mode == ProgressMode::kAlways) return true;
  if (mode == ProgressMode::kNever) return false;
  return isatty(STDERR_FILENO) == 1;
}

int ExitStatus(std::span<const probes::CloneOutcome> clones) {
  int status = 0;
  for (const probes::CloneOutcome& clone : clones) {
    switch (clone.outcome.result.end) {
      case probes::RunEnd::kCompleted:
        break;
      case probes::RunEnd::kInterrupted:
        status = status == 0 ? 130 : status;
        break;
      case probes::RunEnd::kTimedOut:
      case probes::RunEnd::kFailed:
        status = 1;
        break;
    }
  }
  return status;
}

// fio's disk_util: each whole disk under the jobs' targets, its counters read
// when the first clone starts measuring and when the run is over.
class DiskUtilWatch {
 public:
  explicit DiskUtilWatch(const std::string& sysfs) : sysfs_(sysfs) {}

  void AddTarget(dev_t device) {
    auto disk = collectors::FindWholeDisk(sysfs_, major(device), minor(device));
    if (!disk) return;
    for (const Disk& known : disks_) {
      if (known.device.major == disk->major && known.device.minor == disk->minor) return;
    }
    disks_.push_back({*disk, std::nullopt});
  }

  void Begin() {
    begin_seconds_ = MonotonicSeconds();
    for (Disk& disk : disks_) {
      if (auto counters =
              collectors::ReadDeviceCounters(sysfs_, disk.device.major, disk.device.minor)) {
        disk.before = *counters;
      }
    }
  }

  std::vector<collectors::DiskUtil> End() const {
    std::vector<collectors::DiskUtil> out;
    const double ms = (MonotonicSeconds() - begin_seconds_) * 1000;
    for (const Disk& disk : disks_) {
      if (!disk.before) continue;
      if (auto after =
              collectors::ReadDeviceCounters(sysfs_, disk.device.major, disk.device.minor)) {
        out.push_back(collectors::ComputeDiskUtil(disk.device.name, *disk.before, *after, ms));
      }
    }
    return out;
  }

 private:
  struct Disk {
    collectors::BlockDevice device;
    std::optional<collectors::DiskCounters> before;
  };
  FileTree sysfs_;
  std::vector<Disk> disks_;
  double begin_seconds_ = 0;
};

}  // namespace

int RunProbeCommand(const GlobalOptions& global, const std::vector<std::string>& args) {
  probes::TargetPolicy defaults;
  defaults.sysfs = global.sysfs;
  auto options = ParseProbeArgs(args, defaults);
  if (!options) return ReportError("probe", options.error());
  if (options->help) {
    if (Status w = WriteStdout(ProbeUsage()); !w) return ReportError("probe", w.error());
    return 0;
  }
  const bool progress = ShowProgress(options->progress);
  probes::JobSetRunOptions run;
  run.policy = options->policy;
  run.cancel = &StopOnSignals();
  if (progress) {
    run.on_progress = [](const probes::RunProgress& p) {
      // Progress is best effort: a stderr that fails loses only the progress line.
      (void)std::fprintf(stderr, "\r%s\033[K", FormatProgressLine(p).c_str());
      (void)std::fflush(stderr);
    };
  }
  DiskUtilWatch disks(global.sysfs);
  run.on_prepared = [&](dev_t device) { disks.AddTarget(device); };
  run.on_measuring = [&] { disks.Begin(); };
  const int64_t start_unix_ms = WallUnixMs();
  auto clones = probes::RunJobSet(options->jobs, run);
  if (progress) (void)std::fputs("\r\033[K", stderr);
  if (!clones) return ReportError("probe", clones.error());

  ProbeReport report;
  report.global_options = options->jobs.global_options;
  report.entries = MakeReportEntries(options->jobs, *clones);
  report.start_time_ms = clones->empty() ? start_unix_ms : clones->front().outcome.start_unix_ms;
  report.disk_util = disks.End();
  if (Status w =
          WriteStdout(options->format == ProbeOutputFormat::kJson ? FormatProbeJson(report)
                                                                  : FormatProbeNormal(report));
      !w) {
    return ReportError("probe", w.error());
  }
  for (const probes::CloneOutcome& clone : *clones) {
    if (clone.outcome.result.error) (void)ReportError("probe", *clone.outcome.result.error);
  }
  const int status = ExitStatus(*clones);
  const std::string pushed = options->push.url.empty()
                                 ? std::string()
                                 : ProbeRunsExposition(options->jobs, *clones, WallUnixSeconds());
  if (Status push = PushResults(options->push, "iowatch_probe", pushed); !push) {
    (void)ReportError("probe", push.error());
    return status == 0 ? 2 : status;
  }
  return status;
}

}  // namespace iowatch::daemon
