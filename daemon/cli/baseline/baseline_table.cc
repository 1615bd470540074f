#include "daemon/cli/baseline/baseline_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "daemon/cli/baseline/baseline_text.h"
#include "daemon/cli/local_time.h"
#include "probes/baseline/run_metrics.h"

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
  const std::string fingerprint = TerminalSafe(unsafe_fingerprint);
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
  Rows rows{{"JOB", "DEVICE", "PARAMS", "RUNS", "PINNED", "CREATED", "MODEL"}};
  for (const StoredBaseline& s : baselines) {
    const Baseline& b = s.baseline;
    rows.push_back({b.job, b.device, ShortFingerprint(b.fingerprint),
                    fmt::format("{}", s.run_count), s.pinned ? "yes" : "no",
                    FormatLocalIso(b.created_unix_ms), b.model.empty() ? "-" : b.model});
  }
  constexpr Column kLeft{false, 2};
  return RenderTable(rows, {kLeft, kLeft, kLeft, {true, 2}, kLeft, kLeft, kLeft});
}

std::string FormatBaselineHeader(const StoredBaseline& stored) {
  const Baseline& b = stored.baseline;
  std::string out = fmt::format("{} on {}", TerminalSafe(b.job), TerminalSafe(b.device));
  if (!b.model.empty()) out += fmt::format(" ({})", TerminalSafe(b.model));
  out += fmt::format("\n  baseline: {} {} from {} run{}", BaselineSource(stored),
                     FormatLocalIso(b.created_unix_ms), stored.run_count,
                     stored.run_count == 1 ? "" : "s");
  if (!b.run_ids.empty()) out += fmt::format(" ({})", RunIds(b.run_ids));
  out += stored.pinned ? ", pinned" : ", not pinned";
  out += '\n';
  out += FormatParams(b.fingerprint);
  return out;
}

std::string FormatNoBaselineHeader(const RunRecord& newest) {
  std::string out = fmt::format("{} on {}", TerminalSafe(newest.job), TerminalSafe(newest.device));
  if (!newest.model.empty()) out += fmt::format(" ({})", TerminalSafe(newest.model));
  out += "\n  no baseline yet for the parameters of its latest successful run\n";
  out += FormatParams(newest.fingerprint);
  return out;
}

std::string FormatBaselineRuns(const Baseline* baseline, std::span<const RunRecord> runs,
                               const probes::BaselinePolicy& policy, size_t width) {
  // Rows: the union of the baseline's metrics and the runs'.
  std::vector<Key> keys;
  if (baseline != nullptr) {
    for (const MetricBaseline& m : baseline->metrics) AddKey(keys, m.op, m.metric);
  }
  std::vector<std::map<Key, double>> values(runs.size());
  std::vector<std::map<Key, bool>> bad(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::vector<MetricSample>& metrics = runs[r].metrics;
    for (const MetricSample& s : metrics) {
      AddKey(keys, s.op, s.metric);
      values[r][Key{s.op, s.metric}] = s.value;
    }
    if (baseline == nullptr) continue;
    for (const MetricVerdict& v : probes::Compare(*baseline, metrics, policy)) {
      bad[r][Key{v.op, v.metric}] = v.bad;
    }
  }
  SortKeys(keys);

  // Each run's cell: value, ratio, mark; all cells of the table one width.
  size_t value_width = 0;
  size_t ratio_width = 0;
  struct Cell {
    std::string value, ratio;
    bool bad = false;
  };
  std::vector<std::vector<Cell>> cells(keys.size(), std::vector<Cell>(runs.size()));
  std::vector<RowUnit> units;
  for (size_t k = 0; k < keys.size(); ++k) {
    const MetricBaseline* m =
        baseline != nullptr ? baseline->Find(keys[k].first, keys[k].second) : nullptr;
    std::optional<double> reference;
    if (m != nullptr) reference = m->median;
    for (size_t r = 0; r < runs.size() && !reference; ++r) {
      if (auto it = values[r].find(keys[k]); it != values[r].end()) reference = it->second;
    }
    units.push_back(UnitFor(keys[k].second, reference.value_or(0)));
    for (size_t r = 0; r < runs.size(); ++r) {
      Cell& cell = cells[k][r];
      const auto it = values[r].find(keys[k]);
      if (it == values[r].end()) {
        cell.value = "-";
      } else {
        cell.value = FormatNumber(it->second * units[k].scale);
        if (m != nullptr) {
          cell.ratio = m->median != 0 ? FormatRatio(it->second / m->median) : "-";
          const auto verdict = bad[r].find(keys[k]);
          cell.bad = verdict != bad[r].end() && verdict->second;
        }
      }
      value_width = std::max(value_width, DisplayWidth(cell.value));
      ratio_width = std::max(ratio_width, DisplayWidth(cell.ratio));
    }
  }
  const bool with_baseline = baseline != nullptr;
  auto render_cell = [&](const Cell& cell) {
    std::string out;
    Pad(out, cell.value, value_width, true);
    if (!with_baseline) return out;
    out += ' ';
    Pad(out, cell.ratio, ratio_width, true);
    out += cell.bad ? '!' : ' ';
    return out;
  };

  // The fixed columns (label, baseline) repeat in every block of runs.
  const std::vector<std::string> labels = Labels(keys, units);
  std::vector<std::string> medians;
  std::vector<std::string> spreads;
  size_t label_width = 0;
  // Narrow headers ("median", "spread": the section header says it is the
  // baseline) so that five runs fit beside the longest label in 100 columns.
  size_t median_width = DisplayWidth("median");
  size_t spread_width = DisplayWidth("spread");
  for (size_t k = 0; k < keys.size(); ++k) {
    label_width = std::max(label_width, DisplayWidth(labels[k]));
    const MetricBaseline* m =
        with_baseline ? baseline->Find(keys[k].first, keys[k].second) : nullptr;
    medians.push_back(Median(m, units[k].scale));
    spreads.push_back(Spread(m, units[k].scale));
    median_width = std::max(median_width, DisplayWidth(medians.back()));
    spread_width = std::max(spread_width, DisplayWidth(spreads.back()));
  }
  // Headers carry a space over the mark, so they end above the ratio.
  const std::string mark_gap = with_baseline ? " " : "";
  const size_t cell_width = std::max(value_width + (with_baseline ? 2 + ratio_width : 0),
                                     DisplayWidth("00-00 00:00") + mark_gap.size());
  const size_t fixed = label_width + (with_baseline ? 1 + median_width + 2 + spread_width : 0);
  // One space between runs when each cell ends with its mark's column.
  const size_t run_gap = with_baseline ? 1 : 2;
  const size_t room = width + run_gap > fixed + 2 ? width + run_gap - fixed - 2 : 0;
  const size_t per_block = std::max<size_t>(1, room / (cell_width + run_gap));

  std::string out;
  for (size_t first = 0; first < std::max<size_t>(runs.size(), 1); first += per_block) {
    const size_t last = std::min(runs.size(), first + per_block);
    Rows rows(2);
    std::vector<Column> columns{{false, 0}};
    rows[0].push_back("");
    rows[1].push_back("");
    if (with_baseline) {
      rows[0].insert(rows[0].end(), {"", ""});
      rows[1].insert(rows[1].end(), {"median", "spread"});
      columns.insert(columns.end(), {{true, 1}, {false, 2}});
    }
    for (size_t r = first; r < last; ++r) {
      rows[0].push_back(fmt::format("#{}{}", runs[r].id, mark_gap));
      rows[1].push_back(FormatLocal(runs[r].start_unix_ms, "%m-%d %H:%M") + mark_gap);
      columns.push_back({true, r == first ? size_t{2} : run_gap});
    }
    for (size_t k = 0; k < keys.size(); ++k) {
      std::vector<std::string> row{labels[k]};
      if (with_baseline) row.insert(row.end(), {medians[k], spreads[k]});
      for (size_t r = first; r < last; ++r) row.push_back(render_cell(cells[k][r]));
      rows.push_back(std::move(row));
    }
    out += RenderTable(rows, columns);
    out += '\n';
  }
  return out;
}

std::string FormatBaselineChange(const Baseline& now, const Baseline* previous) {
  std::vector<Key> keys;
  for (const MetricBaseline& m : now.metrics) AddKey(keys, m.op, m.metric);
  SortKeys(keys);
  std::vector<RowUnit> units;
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
      "is worse). Those are iowatch's defaults; a daemon configured otherwise judges by its own.\n",
      policy.spread_factor, policy.throughput_tolerance * 100, policy.latency_tolerance * 100,
      policy.tail_tolerance * 100);
}

}  // namespace iowatch::daemon
