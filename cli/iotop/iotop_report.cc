#include "cli/iotop/iotop_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/terminal_text.h"
#include "common/utf8.h"

namespace iowatch::daemon {

std::string FormatIotopText(const std::vector<CgroupTopRow>& rows, const std::string& time,
                            const std::string& device, size_t max_rows) {
  // Names of cgroups and devices are anyone's bytes: escaped for the terminal.
  std::string out = fmt::format("{}  cgroups by I/O{}\n", time,
                                device.empty() ? std::string() : " on " + TerminalText(device));
  out += fmt::format("{:>12} {:>12} {:>10} {:>10} {:>6}  {}\n", "rkB/s", "wkB/s", "r/s", "w/s",
                     "%psi", "cgroup");
  const size_t shown = max_rows == 0 ? rows.size() : std::min(rows.size(), max_rows);
  for (size_t i = 0; i < shown; ++i) {
    const CgroupTopRow& r = rows[i];
    const std::string psi =
        r.pressure_some_avg10 ? fmt::format("{:.2f}", *r.pressure_some_avg10) : "-";
    out += fmt::format("{:>12.2f} {:>12.2f} {:>10.2f} {:>10.2f} {:>6}  {}\n",
                       r.read_bytes_per_second / 1024, r.write_bytes_per_second / 1024,
                       r.reads_per_second, r.writes_per_second, psi, TerminalText(r.cgroup));
  }
  return out + "\n";
}

std::string FormatIotopJson(const std::vector<CgroupTopRow>& rows, const std::string& time,
                            const std::string& device, double interval_seconds) {
  std::string out = fmt::format(R"({{"timestamp": {}, "device": {}, "interval_seconds": {}, )",
                                JsonString(time), JsonString(device), interval_seconds);
  out += R"("cgroups": [)";
  for (size_t i = 0; i < rows.size(); ++i) {
    const CgroupTopRow& r = rows[i];
    out += fmt::format(
        R"({}{{"cgroup": {}, "unit": {}, "read_bytes_per_second": {}, )"
        R"("write_bytes_per_second": {}, "reads_per_second": {}, "writes_per_second": {}, )"
        R"("pressure_some_avg10": {}}})",
        i == 0 ? "" : ", ", JsonString(r.cgroup), JsonString(r.unit), r.read_bytes_per_second,
        r.write_bytes_per_second, r.reads_per_second, r.writes_per_second,
        r.pressure_some_avg10 ? fmt::format("{}", *r.pressure_some_avg10) : "null");
  }
  return out + "]}\n";
}

}  // namespace iowatch::daemon
