#include "cli/iotop/iotop_command.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>

#include "cli/iotop/iotop_options.h"
#include "cli/iotop/iotop_report.h"
#include "cli/shared/cli_output.h"
#include "cli/shared/local_time.h"
#include "cli/shared/sleeper.h"
#include "collectors/disk/device_filter.h"
#include "common/clock.h"
#include "daemon/sources/kmsg/kmsg_source.h"
#include "daemon/sources/sampler.h"
#include "daemon/sources/smart/smart_source.h"

namespace iowatch::daemon {
namespace {

// Rows that fit a terminal under the two header lines; 0 (all) for a pipe.
size_t TerminalRows() {
  winsize ws{};
  if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_row < 4) {
    return 0;
  }
  return ws.ws_row - 4u;
}

SamplerOptions OptionsFor(const IotopOptions& opts) {
  SamplerOptions options;
  options.interval_seconds = static_cast<double>(opts.interval_s);
  options.window_seconds = options.interval_seconds;
  options.cgroups.max_depth = opts.depth;
  options.cgroups.max_pairs = 1'000'000;  // a terminal tool: no cap
  // Who does the I/O, nothing else: no kernel log, no smartctl runs.
  options.settings.Set(kKmsgEnabled, false);
  options.settings.Set(kSmartEnabled, false);
  return options;
}

}  // namespace

int RunIotop(const GlobalOptions& global, const std::vector<std::string>& args) {
  auto opts = ParseIotopArgs(args);
  if (!opts) return ReportError("iotop", opts.error());
  const FileTree procfs(global.procfs);
  const FileTree sysfs(global.sysfs);
  Sampler sampler(OptionsFor(*opts));
  auto first = sampler.Collect(procfs, sysfs, WallUnixSeconds());
  if (const auto& failed = std::ranges::find(first->collectors, "cgroup", &CollectorStatus::name);
      failed != first->collectors.end() && !failed->success) {
    return ReportError("iotop", Error::NotFound(failed->error));
  }
  const bool redraw = !opts->json && TerminalRows() > 0;
  const Status reported = ReportEveryInterval(
      std::chrono::seconds(opts->interval_s), opts->count, [&]() -> Result<std::string> {
        const auto snapshot = sampler.Collect(procfs, sysfs, WallUnixSeconds());
        const std::vector<CgroupTopRow> rows = CgroupTop(*snapshot, opts->device);
        const std::string time = FormatNow("%Y-%m-%dT%H:%M:%S%z");
        std::string text = opts->json ? FormatIotopJson(rows, time, opts->device,
                                                        static_cast<double>(opts->interval_s))
                                      : FormatIotopText(rows, time, opts->device, TerminalRows());
        if (redraw) text.insert(0, "\x1b[H\x1b[2J");  // home and clear: top's refreshing screen
        return text;
      });
  return reported ? 0 : ReportError("iotop", reported.error());
}

}  // namespace iowatch::daemon
