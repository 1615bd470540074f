#include "daemon/vmstat_command.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

#include "collectors/vmstat.h"
#include "daemon/local_time.h"
#include "daemon/sleeper.h"
#include "daemon/vmstat_format.h"
#include "daemon/vmstat_options.h"

namespace iowatch::daemon {
namespace {

// procps repeats the header every (terminal rows - 3) lines; 21 when stdout
// is not a terminal, 22 when the terminal is too small.
uint64_t HeaderInterval() {
  winsize ws{};
  int rows = 24;
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) rows = ws.ws_row;
  return rows - 3 > 0 ? static_cast<uint64_t>(rows - 3) : 22;
}

collectors::VmstatParams ParamsFrom(const VmstatOptions& opts) {
  collectors::VmstatParams params;
  params.unit_bytes = opts.unit_bytes;
  const long hz = sysconf(_SC_CLK_TCK);
  params.hz = hz > 0 ? static_cast<uint64_t>(hz) : 100;
  const long page = sysconf(_SC_PAGESIZE);
  params.page_kib = page > 0 ? static_cast<uint64_t>(page) / 1024 : 4;
  return params;
}

void Write(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

int RunVmstat(const GlobalOptions& global, const std::vector<std::string>& args) {
  auto opts = ParseVmstatArgs(args);
  if (!opts) {
    std::fprintf(stderr, "iowatch vmstat: %s\n", opts.error().ToString().c_str());
    return 2;
  }
  const collectors::FileTree procfs(global.procfs);
  const collectors::VmstatParams params = ParamsFrom(*opts);
  const VmstatLayout layout{opts->wide, opts->active, opts->timestamp};
  const auto fail = [](const Error& e) {
    std::fprintf(stderr, "iowatch vmstat: %s\n", e.ToString().c_str());
    return 2;
  };
  const auto timestamp = [&] { return opts->timestamp ? FormatNow("%Y-%m-%d %H:%M:%S") : ""; };
  const auto header = [&] { Write(VmstatHeader(layout, opts->timestamp ? FormatNow("%Z") : "")); };

  auto prev = collectors::ReadVmSample(procfs);
  if (!prev) return fail(prev.error());
  header();
  // Like procps: -y skips the since-boot line (and, without a delay, waits one second).
  const uint64_t delay = opts->delay_s.value_or(1);
  uint64_t lines = opts->delay_s ? opts->count.value_or(0) : 1;  // 0: forever
  if (opts->count && *opts->count == 0) lines = 1;
  if (opts->skip_since_boot) {
    if (lines != 0) ++lines;
  } else {
    Write(VmstatLine(layout, collectors::ComputeVmstatSinceBoot(*prev, params), timestamp()));
  }
  const uint64_t header_every = HeaderInterval();
  IntervalSleeper sleeper{std::chrono::seconds(delay)};
  for (uint64_t i = 1; lines == 0 || i < lines; ++i) {
    if (!sleeper.SleepUntilNext()) break;
    if (!opts->one_header && i % header_every == 0) header();
    auto cur = collectors::ReadVmSample(procfs);
    if (!cur) return fail(cur.error());
    Write(VmstatLine(layout, collectors::ComputeVmstatInterval(*prev, *cur, delay, params),
                     timestamp()));
    prev = std::move(cur);
  }
  return 0;
}

}  // namespace iowatch::daemon
