#include "daemon/cli/baseline/conditions_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "daemon/cli/baseline/baseline_text.h"

namespace iowatch::daemon {
namespace {

std::string Percent(double share) { return FormatNumber(share * 100); }

std::vector<std::string> ConditionsRow(const probes::RunRecord& run) {
  std::vector<std::string> row{fmt::format("#{}", run.id)};
  if (!run.conditions) {
    row.emplace_back("unknown");
    return row;
  }
  const probes::RunConditions& c = *run.conditions;
  row.push_back(FormatNumber(c.ForeignIops()));
  row.push_back(FormatNumber(c.ForeignBytesPerSecond() / (1 << 20)));
  row.push_back(Percent(c.ForeignShare()));
  row.push_back(Percent(c.Utilisation()));
  row.push_back(c.io_pressure_some ? Percent(*c.io_pressure_some) : "-");
  row.push_back(Percent(c.cpu_steal));
  row.emplace_back(c.other_probe ? "yes" : "no");
  return row;
}

}  // namespace

std::string FormatRunConditions(std::span<const probes::RunRecord> runs) {
  if (std::none_of(runs.begin(), runs.end(),
                   [](const probes::RunRecord& r) { return r.conditions.has_value(); })) {
    return {};
  }
  Rows rows{{"conditions", "others", "others", "others'", "disk", "io", "cpu", "other"},
            {"run", "IOPS", "MiB/s", "time %", "util %", "pressure %", "steal %", "probe"}};
  for (const probes::RunRecord& run : runs) rows.push_back(ConditionsRow(run));
  std::vector<Column> columns{{false, 2}};
  columns.resize(rows.front().size(), Column{true, 2});
  columns.back().right = false;
  // "unknown" rows are shorter: RenderTable takes rows of any length.
  return RenderTable(rows, columns) + '\n';
}

}  // namespace iowatch::daemon
