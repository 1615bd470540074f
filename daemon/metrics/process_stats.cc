#include "daemon/metrics/process_stats.h"

#include <sys/resource.h>

#include "collectors/text/text_scan.h"
#include "collectors/vm/proc_stat.h"
#include "common/host_units.h"

namespace iowatch::daemon {

Result<ProcessStats> ReadProcessStats(const FileTree& procfs) {
  auto stat_text = procfs.Read("self/stat");
  if (!stat_text) return ErrorOf(stat_text);
  // proc(5): the command name (field 2) may contain spaces; fields resume after the last ')'.
  const size_t paren = stat_text->rfind(')');
  if (paren == std::string::npos) {
    return MakeError(ErrorCode::kParse, "expected '(comm)' in /proc/self/stat", "self/stat");
  }
  const auto fields = collectors::SplitFields(std::string_view(*stat_text).substr(paren + 1));
  // After ')': state is field 3, so field N is fields[N - 3].
  if (fields.size() < 22) {
    return MakeError(ErrorCode::kParse, "expected at least 24 fields", "self/stat");
  }
  const auto ticks = static_cast<double>(UserHz());
  const auto field = [&](int n) { return collectors::ParseU64(fields[n - 3]).value_or(0); };
  ProcessStats stats;
  stats.cpu_seconds = static_cast<double>(field(14) + field(15)) / ticks;
  stats.virtual_bytes = field(23);
  stats.resident_bytes = field(24) * PageBytes();
  if (auto proc_stat = procfs.Read("stat")) {
    if (auto parsed = collectors::ParseProcStat(*proc_stat, "stat")) {
      stats.start_time_seconds =
          static_cast<double>(parsed->boot_time) + static_cast<double>(field(22)) / ticks;
    }
  }
  if (const auto count = procfs.ProcfsEntryCount("self/fd")) {
    stats.open_fds = *count;
  } else if (auto fds = procfs.List("self/fd")) {
    stats.open_fds = fds->size();
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) stats.max_fds = limit.rlim_cur;
  return stats;
}

}  // namespace iowatch::daemon
