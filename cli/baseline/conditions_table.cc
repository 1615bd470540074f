#include "cli/baseline/conditions_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "cli/baseline/baseline_text.h"

namespace iowatch::daemon {
namespace {

std::string Percent(double share) { return FormatNumber(share * 100); }

// The columns between the run id and its class.
constexpr size_t kFigures = 10;

// The daemon's words for why a run was not judged (probes::NotJudged), as
// the table says them.
std::string WhyNot(std::string_view reason) {
  if (reason == "learning") return "no baseline yet";
  if (reason == "cpu_contended") return "CPU contended";
  if (reason == "regression_standing") return "regression stands";
  if (reason == "unknown_conditions") return "conditions unknown";
  if (reason == "bands_off") return "bands off";
  if (reason == "no_metric") return "too few I/Os";
  if (reason == "outside_model") return "beyond the load model";
  return std::string(reason);
}

// The run's class and whether it was judged, the last two columns: as the
// daemon stored it, else as its band says.
void AppendVerdict(const probes::Classification& c, const std::set<int>& bands,
                   const probes::StoredRunVerdict* stored, std::vector<std::string>& row) {
  if (c.band == probes::kNoBand) {
    row.emplace_back("cpu");
  } else {
    row.push_back(c.run_class == probes::RunClass::kClean ? std::string("clean")
                                                          : fmt::format("band {}", c.band));
  }
  if (stored != nullptr) {
    row.push_back(stored->judged ? std::string("yes") : "no: " + WhyNot(stored->reason));
  } else if (c.band == probes::kNoBand) {
    row.emplace_back("no: CPU contended");
  } else {
    row.emplace_back(bands.contains(c.band) ? "yes" : "no: no baseline yet");
  }
}

std::vector<std::string> ConditionsRow(const probes::RunRecord& run,
                                       const probes::ContentionPolicy& policy,
                                       const std::set<int>& bands,
                                       const probes::StoredRunVerdict* stored) {
  std::vector<std::string> row{fmt::format("#{}", run.id)};
  if (!run.conditions) {
    row.resize(kFigures + 1, "-");
    row.emplace_back("unknown");
    row.emplace_back("no: conditions unknown");
    return row;
  }
  const probes::RunConditions& c = *run.conditions;
  row.push_back(FormatNumber(c.ForeignIops()));
  row.push_back(FormatNumber(c.ForeignBytesPerSecond() / (1 << 20)));
  row.push_back(Percent(c.ForeignShare()));
  row.push_back(c.before ? FormatNumber(c.before->Iops()) : "-");
  row.push_back(c.before ? FormatNumber(c.before->BytesPerSecond() / (1 << 20)) : "-");
  row.push_back(Percent(c.Utilisation()));
  row.push_back(c.io_pressure_some ? Percent(*c.io_pressure_some) : "-");
  row.push_back(c.cpu_wait ? Percent(*c.cpu_wait) : "-");
  row.push_back(Percent(c.cpu_steal));
  row.emplace_back(c.other_probe ? "yes" : "no");
  AppendVerdict(probes::Classify(c, policy), bands, stored, row);
  return row;
}

}  // namespace

std::string FormatRunConditions(std::span<const probes::RunRecord> runs,
                                const probes::ContentionPolicy& policy, const std::set<int>& bands,
                                const std::map<int64_t, probes::StoredRunVerdict>& stored) {
  if (std::none_of(runs.begin(), runs.end(),
                   [](const probes::RunRecord& r) { return r.conditions.has_value(); })) {
    return {};
  }
  Rows rows{{"conditions", "others", "others", "others'", "before", "before", "disk", "io", "cpu",
             "cpu", "other", "class", "judged"},
            {"run", "IOPS", "MiB/s", "work %", "IOPS", "MiB/s", "util %", "pressure %", "wait %",
             "steal %", "probe", "", ""}};
  for (const probes::RunRecord& run : runs) {
    const auto verdict = stored.find(run.id);
    rows.push_back(
        ConditionsRow(run, policy, bands, verdict == stored.end() ? nullptr : &verdict->second));
  }
  std::vector<Column> columns{{false, 2}};
  columns.resize(rows.front().size(), Column{true, 2});
  for (size_t i = columns.size() - 3; i < columns.size(); ++i) columns[i].right = false;
  // "unknown" rows are shorter: RenderTable takes rows of any length.
  return RenderTable(rows, columns) + '\n';
}

}  // namespace iowatch::daemon
