#include "daemon/metrics/process_stats.h"

#include <sys/resource.h>

#include <string>
#include <vector>

#include "collectors/text/text_scan.h"
#include "collectors/vm/proc_stat.h"
#include "common/host_units.h"

namespace iowatch::daemon {
namespace {

// /proc/self/stat's fields from field 3 (state) on: field N is fields[N - 3].
// proc(5): the command name (field 2) may contain spaces and ')'; the fields
// resume after the last ')'. Views into `text`.
Result<std::vector<std::string_view>> SelfStatFields(const std::string& text) {
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) {
    return MakeError(ErrorCode::kParse, "expected '(comm)' in /proc/self/stat", "self/stat");
  }
  auto fields = collectors::SplitFields(std::string_view(text).substr(paren + 1));
  if (fields.size() < 22) {
    return MakeError(ErrorCode::kParse, "expected at least 24 fields", "self/stat");
  }
  return fields;
}

uint64_t Field(const std::vector<std::string_view>& fields, int n) {
  return collectors::ParseU64(fields[n - 3]).value_or(0);
}

}  // namespace

Result<ProcessStats> ReadProcessStats(const FileTree& procfs) {
  auto stat_text = procfs.Read("self/stat");
  if (!stat_text) return ErrorOf(stat_text);
  const auto fields = SelfStatFields(*stat_text);
  if (!fields) return ErrorOf(fields);
  ProcessStats stats;
  stats.cpu_seconds =
      static_cast<double>(Field(*fields, 14) + Field(*fields, 15)) / static_cast<double>(UserHz());
  stats.virtual_bytes = Field(*fields, 23);
  stats.resident_bytes = Field(*fields, 24) * PageBytes();
  if (const auto count = procfs.ProcfsEntryCount("self/fd")) {
    stats.open_fds = *count;
  } else if (auto fds = procfs.List("self/fd")) {
    stats.open_fds = fds->size();
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) stats.max_fds = limit.rlim_cur;
  return stats;
}

Result<double> ReadProcessStartTime(const FileTree& procfs) {
  auto stat_text = procfs.Read("self/stat");
  if (!stat_text) return ErrorOf(stat_text);
  const auto fields = SelfStatFields(*stat_text);
  if (!fields) return ErrorOf(fields);
  auto proc_stat = procfs.Read("stat");
  if (!proc_stat) return ErrorOf(proc_stat);
  auto parsed = collectors::ParseProcStat(*proc_stat, "stat");
  if (!parsed) return ErrorOf(parsed);
  return static_cast<double>(parsed->boot_time) +
         static_cast<double>(Field(*fields, 22)) / static_cast<double>(UserHz());
}

}  // namespace iowatch::daemon
