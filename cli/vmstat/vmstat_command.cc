#include "cli/vmstat/vmstat_command.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

#include "cli/shared/cli_output.h"
#include "cli/shared/local_time.h"
#include "cli/shared/sleeper.h"
#include "cli/vmstat/vmstat_session.h"
#include "common/host_units.h"

namespace iowatch::daemon {
namespace {

// procps repeats the header every (terminal rows - 3) lines: 21 when stdout
// is not a terminal, 22 when the terminal is too small.
uint64_t HeaderInterval() {
  winsize ws{};
  int rows = 24;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) rows = ws.ws_row;
  return rows - 3 > 0 ? static_cast<uint64_t>(rows - 3) : 22;
}

collectors::VmstatParams ParamsFor(uint64_t unit_bytes) {
  collectors::VmstatParams params;
  params.unit_bytes = unit_bytes;
  params.hz = UserHz();
  params.page_kib = PageBytes() / 1024;
  return params;
}

}  // namespace

int RunVmstat(const GlobalOptions& global, const std::vector<std::string>& args) {
  auto opts = ParseVmstatArgs(args);
  if (!opts) return ReportError("vmstat", opts.error());
  const FileTree procfs(global.procfs);
  VmstatSession session(*opts, ParamsFor(opts->unit_bytes), HeaderInterval(), FormatNow);

  auto first = collectors::ReadVmSample(procfs);
  if (!first) return ReportError("vmstat", first.error());
  if (Status w = WriteStdout(session.Start(std::move(*first))); !w) {
    return ReportError("vmstat", w.error());
  }
  const Status reported =
      ReportEveryInterval(std::chrono::seconds(session.DelaySeconds()), session.IntervalLines(),
                          [&]() -> Result<std::string> {
                            auto sample = collectors::ReadVmSample(procfs);
                            if (!sample) return ErrorOf(sample);
                            return session.Next(std::move(*sample));
                          });
  return reported ? 0 : ReportError("vmstat", reported.error());
}

}  // namespace iowatch::daemon
