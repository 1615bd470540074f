#include "cli/iostat/iostat_command.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "cli/shared/cli_output.h"
#include "cli/iostat/iostat_session.h"
#include "cli/shared/local_time.h"
#include "cli/shared/sleeper.h"

namespace iowatch::daemon {
namespace {

void WarnSkippedLines(const IostatSample& sample) {
  for (const Error& e : sample.disks.diskstats.skipped) {
    (void)std::fprintf(stderr, "iowatch iostat: %s (line skipped)\n", e.ToString().c_str());
  }
}

}  // namespace

int RunIostat(const GlobalOptions& global, const std::vector<std::string>& args) {
  auto opts = ParseIostatArgs(args);
  if (!opts) return ReportError("iostat", opts.error());
  const FileTree procfs(global.procfs);
  const FileTree sysfs(global.sysfs);
  const char* time_format = std::getenv("S_TIME_FORMAT");
  IostatSession session(*opts, ReadHostInfo(sysfs), FormatNow,
                        std::getenv("POSIXLY_CORRECT") != nullptr,
                        time_format != nullptr && std::string_view(time_format) == "ISO");

  auto first = ReadIostatSample(procfs, sysfs);
  if (!first) return ReportError("iostat", first.error());
  WarnSkippedLines(*first);
  if (Status w = WriteStdout(session.Start(std::move(*first))); !w) {
    return ReportError("iostat", w.error());
  }
  if (opts->interval_s) {
    // The since-boot report (printed unless -y skipped it) counts as one.
    const long printed = opts->skip_since_boot ? 0 : 1;
    std::optional<uint64_t> reports;
    if (opts->count) reports = static_cast<uint64_t>(std::max(0L, *opts->count - printed));
    const Status reported = ReportEveryInterval(
        std::chrono::seconds(*opts->interval_s), reports, [&]() -> Result<std::string> {
          auto sample = ReadIostatSample(procfs, sysfs, session.previous());
          if (!sample) {
            (void)WriteStdout(session.Finish());  // the sample's error is the one to report
            return ErrorOf(sample);
          }
          return session.Next(std::move(*sample));
        });
    if (!reported) return ReportError("iostat", reported.error());
  }
  if (Status w = WriteStdout(session.Finish()); !w) return ReportError("iostat", w.error());
  return 0;
}

}  // namespace iowatch::daemon
