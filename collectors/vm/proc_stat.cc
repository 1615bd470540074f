#include "collectors/vm/proc_stat.h"

#include <array>

#include "collectors/text/text_scan.h"

namespace iowatch::collectors {
namespace {

std::optional<CpuTicks> ParseCpuFields(const std::vector<std::string_view>& fields) {
  // fields[0] is the "cpu"/"cpuN" label; at least user, nice, system, idle follow.
  if (fields.size() < 5) return std::nullopt;
  std::array<uint64_t, 10> v{};
  for (size_t i = 1; i < fields.size() && i <= v.size(); ++i) {
    const auto value = ParseU64(fields[i]);
    if (!value) return std::nullopt;
    v[i - 1] = *value;
  }
  return CpuTicks{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]};
}

}  // namespace

Result<ProcStat> ParseProcStat(std::string_view text, std::string_view path) {
  ProcStat stat;
  bool have_total = false;
  std::optional<Error> error;
  ForEachLine(text, [&](std::string_view line, int line_number) {
    if (error) return;
    const auto fields = SplitFields(line);
    if (fields.empty()) return;
    const std::string_view key = fields[0];
    if (key.starts_with("cpu")) {
      const auto ticks = ParseCpuFields(fields);
      if (!ticks) {
        error = Error::Parse("expected 'cpu' followed by at least 4 unsigned tick counts",
                             std::string(path), line_number);
        return;
      }
      if (key == "cpu") {
        stat.total = *ticks;
        have_total = true;
      } else if (const auto index = ParseU64(key.substr(3)); index && *index < 65536) {
        if (stat.per_cpu.size() <= *index) stat.per_cpu.resize(*index + 1);
        stat.per_cpu[*index] = *ticks;
      }
      return;
    }
    if (fields.size() < 2) return;
    const auto value = ParseU64(fields[1]);
    if (!value) return;
    if (key == "intr")
      stat.interrupts = *value;
    else if (key == "ctxt")
      stat.context_switches = *value;
    else if (key == "btime")
      stat.boot_time = *value;
    else if (key == "processes")
      stat.forks = *value;
    else if (key == "procs_running")
      stat.procs_running = *value;
    else if (key == "procs_blocked")
      stat.procs_blocked = *value;
  });
  if (error) return std::unexpected(*error);
  if (!have_total) {
    return MakeError(ErrorCode::kParse, "expected a 'cpu' line, found none", std::string(path));
  }
  return stat;
}

}  // namespace iowatch::collectors
