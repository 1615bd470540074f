#include "cli/baseline/baseline_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "cli/baseline/baseline_text.h"
#include "cli/shared/local_time.h"
#include "common/terminal_text.h"
#include "probes/verdicts/job_judge.h"
#include "probes/verdicts/run_metrics.h"

namespace iowatch::daemon {
namespace {

using probes::Baseline;
using probes::MetricBaseline;
using probes::MetricSample;
using probes::MetricVerdict;
using probes::RunRecord;
using probes::StoredBaseline;

using Key = std::pair<std::string, std::string>;  // (op, metric)

size_t OpRank(std::string_view op) { return op == "read" ? 0 : op == "write" ? 1 : 2; }

size_t MetricRank(std::string_view metric) {
  const auto specs = probes::BaselineMetrics();
  for (size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].name == metric) return i;
  }
  return specs.size();
}

// Read before write, BaselineMetrics() order within an op, anything unknown
// after in order of appearance.
void SortKeys(std::vector<Key>& keys) {
  std::ranges::stable_sort(keys, [](const Key& a, const Key& b) {
    return std::make_tuple(OpRank(a.first), MetricRank(a.second)) <
           std::make_tuple(OpRank(b.first), MetricRank(b.second));
  });
}

void AddKey(std::vector<Key>& keys, std::string_view op, std::string_view metric) {
  Key key{std::string(op), std::string(metric)};
  if (std::ranges::find(keys, key) == keys.end()) keys.push_back(std::move(key));
}

std::string Median(const MetricBaseline* m, double scale) {
  return m != nullptr ? FormatNumber(m->median * scale) : "-";
}
std::string Spread(const MetricBaseline* m, double scale) {
  return m != nullptr ? "±" + FormatNumber(m->spread * scale) : "";
}

// The op on its first row only, then the metric with its unit.
std::vector<std::string> Labels(const std::vector<Key>& keys, const std::vector<RowUnit>& units) {
  size_t op_width = 0;
  for (const Key& k : keys) op_width = std::max(op_width, k.first.size());
  std::vector<std::string> labels;
  for (size_t k = 0; k < keys.size(); ++k) {
    std::string label;
    Pad(label, k == 0 || keys[k - 1].first != keys[k].first ? keys[k].first : "", op_width, false);
    labels.push_back(label + " " + units[k].label);
  }
  return labels;
}

// "#3 #5 #7" or, when long, "#3 … #99".
std::string RunIds(const std::vector<int64_t>& ids) {
  if (ids.size() > 10) return fmt::format("#{} … #{}", ids.front(), ids.back());
  std::string out;
  for (int64_t id : ids) out += fmt::format("{}#{}", out.empty() ? "" : " ", id);
  return out;
}

// "  params 1a2b3c4d: rw=randread;bs=4k;..." wrapped after a ';' to fit the
// table width, continuation lines indented under the first option.
std::string FormatParams(std::string_view unsafe_fingerprint) {
  const std::string fingerprint = TerminalText(unsafe_fingerprint);
  const std::string lead = fmt::format("  params {}: ", ShortFingerprint(unsafe_fingerprint));
  std::vector<std::string> options{""};
  bool escaped = false;
  for (char c : fingerprint) {
    options.back() += c;
    if (!escaped && c == ';') options.emplace_back();
    escaped = !escaped && c == '\\';
  }
  std::string out = lead;
  size_t column = lead.size();
  for (const std::string& option : options) {
    if (column > lead.size() && column + option.size() > kBaselineTableWidth) {
      out += '\n';
      out.append(lead.size(), ' ');
      column = lead.size();
    }
    out += option;
    column += option.size();
  }
  out += '\n';
  return out;
}

// Rows: the union of the baseline's metrics and the runs', in SortKeys order;
// per run its values and, against a baseline, which of them are bad.
struct RunValues {
  std::vector<Key> keys;
  std::vector<std::map<Key, double>> values;
  std::vector<std::map<Key, bool>> bad;
};

// The rows shown: the metrics the policy judges (the others are kept in
// the store and exported, but would bury these), and any metric unknown to
// this iowatch.
bool Shown(std::string_view metric, const probes::BaselinePolicy& policy) {
  const probes::MetricSpec* spec = probes::FindMetric(metric);
  return spec == nullptr || policy.Judges(*spec);
}

RunValues CollectRunValues(const Baseline* baseline, std::span<const RunRecord> runs,
                           const probes::BaselinePolicy& policy) {
  RunValues out;
  if (baseline != nullptr) {
    for (const MetricBaseline& m : baseline->metrics) {
      if (Shown(m.metric, policy)) AddKey(out.keys, m.op, m.metric);
    }
  }
  out.values.resize(runs.size());
  out.bad.resize(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::vector<MetricSample>& metrics = runs[r].metrics;
    for (const MetricSample& s : metrics) {
      if (!Shown(s.metric, policy)) continue;
      AddKey(out.keys, s.op, s.metric);
      out.values[r][Key{s.op, s.metric}] = s.value;
    }
    if (baseline == nullptr) continue;
    for (const MetricVerdict& v : probes::Compare(*baseline, metrics, policy, &runs[r].result)) {
      out.bad[r][Key{v.op, v.metric}] = v.bad;
    }
  }
  SortKeys(out.keys);
  return out;
}

// The baseline's row for `key`; null without a baseline.
const MetricBaseline* BaselineFor(const Baseline* baseline, const Key& key) {
  return baseline != nullptr ? baseline->Find(key.first, key.second) : nullptr;
}

// What a row's unit is chosen by: the baseline median, else the first run
// that has the metric.
std::optional<double> UnitReference(const MetricBaseline* m, const RunValues& runs,
                                    const Key& key) {
  if (m != nullptr) return m->median;
  for (const std::map<Key, double>& values : runs.values) {
    if (auto it = values.find(key); it != values.end()) return it->second;
  }
  return std::nullopt;
}

// One run's cell: its value, its ratio to the baseline median, its mark.
struct Cell {
  std::string value, ratio;
  bool bad = false;
};

Cell MakeCell(const RunValues& runs, size_t r, const Key& key, const MetricBaseline* m,
              double scale) {
  Cell cell;
  const auto it = runs.values[r].find(key);
  if (it == runs.values[r].end()) {
    cell.value = "-";
    return cell;
  }
  cell.value = FormatNumber(it->second * scale);
  if (m != nullptr) {
    cell.ratio = m->median != 0 ? FormatRatio(it->second / m->median) : "-";
    const auto verdict = runs.bad[r].find(key);
    cell.bad = verdict != runs.bad[r].end() && verdict->second;
  }
  return cell;
}

// The runs' cells, [key][run], with each row's unit and the widths that all
// cells of the table share.
struct CellGrid {
  std::vector<std::vector<Cell>> cells;
  std::vector<RowUnit> units;
  size_t value_width = 0;
  size_t ratio_width = 0;
};

CellGrid BuildCells(const Baseline* baseline, const RunValues& runs) {
  CellGrid grid;
  for (const Key& key : runs.keys) {
    const MetricBaseline* m = BaselineFor(baseline, key);
    const RowUnit& unit =
        grid.units.emplace_back(UnitFor(key.second, UnitReference(m, runs, key).value_or(0)));
    std::vector<Cell>& row = grid.cells.emplace_back();
    for (size_t r = 0; r < runs.values.size(); ++r) {
      const Cell& cell = row.emplace_back(MakeCell(runs, r, key, m, unit.scale));
      grid.value_width = std::max(grid.value_width, DisplayWidth(cell.value));
      grid.ratio_width = std::max(grid.ratio_width, DisplayWidth(cell.ratio));
    }
  }
  return grid;
}

// The fixed columns (label, baseline) that repeat in every block of runs.
struct FixedColumns {
  std::vector<std::string> labels;
  std::vector<std::string> medians;
  std::vector<std::string> spreads;
  size_t label_width = 0;
  // Narrow headers ("median", "spread": the section header says it is the
  // baseline) so that five runs fit beside the longest label in 100 columns.
  size_t median_width = DisplayWidth("median");
  size_t spread_width = DisplayWidth("spread");
};

FixedColumns BuildFixedColumns(const Baseline* baseline, const std::vector<Key>& keys,
                               const std::vector<RowUnit>& units) {
  FixedColumns out;
  out.labels = Labels(keys, units);
  for (size_t k = 0; k < keys.size(); ++k) {
    out.label_width = std::max(out.label_width, DisplayWidth(out.labels[k]));
    const MetricBaseline* m = BaselineFor(baseline, keys[k]);
    out.medians.push_back(Median(m, units[k].scale));
    out.spreads.push_back(Spread(m, units[k].scale));
    out.median_width = std::max(out.median_width, DisplayWidth(out.medians.back()));
    out.spread_width = std::max(out.spread_width, DisplayWidth(out.spreads.back()));
  }
  return out;
}

struct RunLayout {
  bool with_baseline = false;
  // Headers carry a space over the mark, so they end above the ratio.
  std::string mark_gap;
  // One space between runs when each cell ends with its mark's column.
  size_t run_gap = 2;
  size_t per_block = 1;  // runs side by side within `width`
};

RunLayout LayOutRuns(const CellGrid& grid, const FixedColumns& fixed, bool with_baseline,
                     size_t width) {
  RunLayout layout;
  layout.with_baseline = with_baseline;
  layout.mark_gap = with_baseline ? " " : "";
  layout.run_gap = with_baseline ? 1 : 2;
  const size_t cell_width = std::max(grid.value_width + (with_baseline ? 2 + grid.ratio_width : 0),
                                     DisplayWidth("00-00 00:00") + layout.mark_gap.size());
  const size_t fixed_width =
      fixed.label_width + (with_baseline ? 1 + fixed.median_width + 2 + fixed.spread_width : 0);
  const size_t room =
      width + layout.run_gap > fixed_width + 2 ? width + layout.run_gap - fixed_width - 2 : 0;
  layout.per_block = std::max<size_t>(1, room / (cell_width + layout.run_gap));
  return layout;
}

// The value, then against a baseline the ratio and the mark ('!' when bad).
std::string RenderCell(const Cell& cell, const CellGrid& grid, bool with_baseline) {
  std::string out;
  Pad(out, cell.value, grid.value_width, true);
  if (!with_baseline) return out;
  out += ' ';
  Pad(out, cell.ratio, grid.ratio_width, true);
  out += cell.bad ? '!' : ' ';
  return out;
}

// The block of runs [first, last): two header rows (run id, start time),
// then one row per metric.
Rows BlockRows(std::span<const RunRecord> runs, size_t first, size_t last, const CellGrid& grid,
               const FixedColumns& fixed, const RunLayout& layout) {
  Rows rows(2);
  rows[0].emplace_back();
  rows[1].emplace_back();
  if (layout.with_baseline) {
    rows[0].insert(rows[0].end(), {"", ""});
    rows[1].insert(rows[1].end(), {"median", "spread"});
  }
  for (size_t r = first; r < last; ++r) {
    rows[0].push_back(fmt::format("#{}{}", runs[r].id, layout.mark_gap));
    rows[1].push_back(FormatLocal(runs[r].start_unix_ms, "%m-%d %H:%M") + layout.mark_gap);
  }
  for (size_t k = 0; k < fixed.labels.size(); ++k) {
    std::vector<std::string> row{fixed.labels[k]};
    if (layout.with_baseline) row.insert(row.end(), {fixed.medians[k], fixed.spreads[k]});
    for (size_t r = first; r < last; ++r) {
      row.push_back(RenderCell(grid.cells[k][r], grid, layout.with_baseline));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<Column> BlockColumns(size_t first, size_t last, const RunLayout& layout) {
  std::vector<Column> columns{{false, 0}};
  if (layout.with_baseline) columns.insert(columns.end(), {{true, 1}, {false, 2}});
  for (size_t r = first; r < last; ++r) {
    columns.push_back({true, r == first ? size_t{2} : layout.run_gap});
  }
  return columns;
}

}  // namespace

std::string ShortFingerprint(std::string_view fingerprint) {
  uint32_t hash = 2166136261u;
  for (char c : fingerprint) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619u;
  }
  return fmt::format("{:08x}", hash);
}

std::string FormatLocalIso(int64_t unix_ms) {
  std::string out = FormatLocal(unix_ms, "%Y-%m-%dT%H:%M:%S%z");
  // strftime's %z is "+0200"; ISO 8601's extended form, matching the date's, is "+02:00".
  if (out.size() >= 5) out.insert(out.size() - 2, 1, ':');
  return out;
}

std::string_view BaselineSource(const StoredBaseline& stored) {
  if (!stored.pinned) return "learned";
  return stored.baseline.run_ids.empty() ? "imported" : "captured";
}

std::string FormatBaselineList(std::span<const StoredBaseline> baselines) {
  Rows rows{{"JOB", "DEVICE", "PARAMS", "BAND", "RUNS", "PINNED", "CREATED", "MODEL"}};
  for (const StoredBaseline& s : baselines) {
    const Baseline& b = s.baseline;
    rows.push_back({b.job, b.device, ShortFingerprint(b.fingerprint),
                    b.band == probes::kCleanBand ? "clean" : fmt::format("{}", b.band),
                    fmt::format("{}", s.run_count), s.pinned ? "yes" : "no",
                    FormatLocalIso(b.created_unix_ms), b.model.empty() ? "-" : b.model});
  }
  constexpr Column kLeft{false, 2};
  return RenderTable(rows, {kLeft, kLeft, kLeft, kLeft, {true, 2}, kLeft, kLeft, kLeft});
}

std::string FormatBaselineHeader(const StoredBaseline& stored) {
  const Baseline& b = stored.baseline;
  std::string out = fmt::format("{} on {}", TerminalText(b.job), TerminalText(b.device));
  if (!b.model.empty()) out += fmt::format(" ({})", TerminalText(b.model));
  const std::string band =
      b.band == probes::kCleanBand ? "" : fmt::format(" of {}", probes::DescribeBand(b.band));
  out += fmt::format("\n  baseline{}: {} {} from {} run{}", band, BaselineSource(stored),
                     FormatLocalIso(b.created_unix_ms), stored.run_count,
                     stored.run_count == 1 ? "" : "s");
  if (!b.run_ids.empty()) out += fmt::format(" ({})", RunIds(b.run_ids));
  out += stored.pinned ? ", pinned" : ", not pinned";
  out += '\n';
  out += FormatParams(b.fingerprint);
  return out;
}

std::string FormatNoBaselineHeader(const RunRecord& newest) {
  std::string out = fmt::format("{} on {}", TerminalText(newest.job), TerminalText(newest.device));
  if (!newest.model.empty()) out += fmt::format(" ({})", TerminalText(newest.model));
  out += "\n  no baseline yet for the parameters of its latest successful run\n";
  out += FormatParams(newest.fingerprint);
  return out;
}

std::string FormatBaselineRuns(const Baseline* baseline, std::span<const RunRecord> runs,
                               const probes::BaselinePolicy& policy, size_t width) {
  const RunValues values = CollectRunValues(baseline, runs, policy);
  const CellGrid grid = BuildCells(baseline, values);
  const FixedColumns fixed = BuildFixedColumns(baseline, values.keys, grid.units);
  const RunLayout layout = LayOutRuns(grid, fixed, baseline != nullptr, width);
  std::string out;
  for (size_t first = 0; first < std::max<size_t>(runs.size(), 1); first += layout.per_block) {
    const size_t last = std::min(runs.size(), first + layout.per_block);
    out += RenderTable(BlockRows(runs, first, last, grid, fixed, layout),
                       BlockColumns(first, last, layout));
    out += '\n';
  }
  // A run the store could not read whole: what is missing from its column.
  for (const RunRecord& run : runs) {
    for (const std::string& damage : run.damage) {
      out += fmt::format("  run {}: {}; the rest of the run is as stored\n", run.id,
                         TerminalText(damage));
    }
  }
  return out;
}

std::string FormatBaselineChange(const Baseline& now, const Baseline* previous) {
  std::vector<Key> keys;
  for (const MetricBaseline& m : now.metrics) AddKey(keys, m.op, m.metric);
  SortKeys(keys);
  std::vector<RowUnit> units;
  units.reserve(keys.size());
  for (const Key& k : keys) units.push_back(UnitFor(k.second, now.Find(k.first, k.second)->median));
  const std::vector<std::string> labels = Labels(keys, units);
  Rows rows{{"", "baseline", "", previous != nullptr ? "previous" : "", "", ""}};
  for (size_t i = 0; i < keys.size(); ++i) {
    const MetricBaseline* m = now.Find(keys[i].first, keys[i].second);
    const MetricBaseline* was =
        previous != nullptr ? previous->Find(keys[i].first, keys[i].second) : nullptr;
    const RowUnit& unit = units[i];
    std::vector<std::string> row{labels[i], Median(m, unit.scale), Spread(m, unit.scale)};
    if (previous != nullptr) {
      row.push_back(Median(was, unit.scale));
      row.push_back(Spread(was, unit.scale));
      row.push_back(was != nullptr && was->median != 0 ? "×" + FormatRatio(m->median / was->median)
                                                       : "");
    }
    rows.push_back(std::move(row));
  }
  return RenderTable(rows, {{false, 2}, {true, 2}, {false, 2}, {true, 2}, {false, 2}, {true, 2}});
}

std::string FormatBaselineLegend(const probes::BaselinePolicy& policy) {
  return fmt::format(
      "Each run: its value, its ratio to the baseline median, and '!' when it is worse than\n"
      "the median by more than max(tolerance × median, {:g} × spread); tolerances: {:g}% for\n"
      "IOPS and MiB/s (lower is worse), {:g}% for latencies, {:g}% for p99 and above (higher\n"
      "is worse): iowatch's defaults, or --config.file's; a daemon configured otherwise judges\n"
      "by its own.\n",
      policy.spread_factor, policy.throughput_tolerance * 100, policy.latency_tolerance * 100,
      policy.tail_tolerance * 100);
}

}  // namespace iowatch::daemon
