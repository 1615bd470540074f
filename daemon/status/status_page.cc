#include "daemon/status/status_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "common/markup.h"
#include "common/units.h"
#include "common/version.h"
#include "daemon/sampling/cgroup_top.h"
#include "daemon/sampling/derived_series.h"
#include "daemon/sampling/snapshot_advice.h"
#include "daemon/sampling/snapshot_health.h"
#include "daemon/status/md_rows.h"
#include "daemon/status/passive_rows.h"
#include "daemon/status/regression_rows.h"
#include "daemon/status/storage_rows.h"
#include "daemon/status/thin_pool_rows.h"

namespace iowatch::daemon {
namespace {

constexpr int kRefreshSeconds = 10;

// A column of the page: the reference tool's column (the series definitions
// say which series that is), and how the page shows it.
struct PageColumn {
  const char* header;
  const char* column;  // iostat -x's or vmstat's column name
  double scale;        // from the series' base unit
  int decimals;
};

// iostat -x's units: kB/s, ms, percent.
constexpr PageColumn kDeviceColumns[] = {
    {"r/s", "r/s", 1, 2},
    {"rkB/s", "rkB/s", 1.0 / 1024, 2},
    {"r_await ms", "r_await", 1000, 2},
    {"w/s", "w/s", 1, 2},
    {"wkB/s", "wkB/s", 1.0 / 1024, 2},
    {"w_await ms", "w_await", 1000, 2},
    {"aqu-sz", "aqu-sz", 1, 2},
    {"%util", "%util", 100, 2},
};
constexpr PageColumn kUtilization = {"%util max", "%util", 100, 2};

// vmstat's columns in its order; memory in MiB, swap and io in kB/s, CPU in percent
// (one decimal where the unit is scaled, as vmstat's integers would hide it).
constexpr PageColumn kVmstatColumns[] = {
    {"r", "r", 1, 0},
    {"b", "b", 1, 0},
    {"swpd MiB", "swpd", 1.0 / 1048576, 1},
    {"free MiB", "free", 1.0 / 1048576, 1},
    {"buff MiB", "buff", 1.0 / 1048576, 1},
    {"cache MiB", "cache", 1.0 / 1048576, 1},
    {"si kB/s", "si", 1.0 / 1024, 1},
    {"so kB/s", "so", 1.0 / 1024, 1},
    {"bi kB/s", "bi", 1.0 / 1024, 1},
    {"bo kB/s", "bo", 1.0 / 1024, 1},
    {"in", "in", 1, 0},
    {"cs", "cs", 1, 0},
    {"us", "us", 100, 1},
    {"sy", "sy", 100, 1},
    {"id", "id", 100, 1},
    {"wa", "wa", 100, 1},
    {"st", "st", 100, 1},
};

double At(const std::vector<double>& values, size_t i) { return i < values.size() ? values[i] : 0; }

std::string Cell(double value, int decimals) {
  return fmt::format("<td class=\"n\">{:.{}f}</td>", value, decimals);
}

std::string Cell(const std::vector<double>& values, size_t index, const PageColumn& column) {
  return Cell(At(values, index) * column.scale, column.decimals);
}

// The probe jobs' standing regressions by disk, for the health column.
std::vector<ProbeSeriesVerdict> ProbeVerdictsOf(const ProbeSnapshot* probes) {
  std::vector<ProbeSeriesVerdict> out;
  if (probes == nullptr) return out;
  for (const ProbeJobSnapshot& job : probes->jobs) {
    if (job.last_run_timestamp_seconds == 0) continue;  // never ran: no disk yet
    const bool regressed = std::ranges::any_of(job.verdicts, &ProbeVerdict::regressed);
    out.push_back({job.name, fmt::format("{}:{}", job.target_major, job.target_minor), regressed});
  }
  return out;
}

// A disk's health in a cell: its first problem (all of them in the title),
// or "ok" with its SMART state.
std::string HealthCell(const DiskHealth* disk) {
  if (disk == nullptr) return "<td class=\"dim\">-</td>";
  if (disk->problems.empty()) {
    return fmt::format("<td class=\"good\">ok <span class=\"dim\">(SMART {})</span></td>",
                       HtmlEscape(disk->smart.state));
  }
  std::string all;
  for (const std::string& p : disk->problems) all += (all.empty() ? "" : "; ") + p;
  std::string more;
  if (disk->problems.size() > 1) more = fmt::format(" (+{})", disk->problems.size() - 1);
  return fmt::format("<td class=\"bad\" title=\"{}\">{}{}</td>", HtmlEscape(all),
                     HtmlEscape(disk->problems.front()), more);
}

HostHealth HealthOf(const Snapshot& s, const ProbeSnapshot* probes,
                    const PassiveSnapshot* passive) {
  const bool smart_ran =
      std::ranges::any_of(s.collectors, [](const CollectorStatus& c) { return c.name == "smart"; });
  const std::vector<PassiveSeriesVerdict> judged =
      passive == nullptr ? std::vector<PassiveSeriesVerdict>{} : PassiveVerdictsOf(*passive);
  return BuildHostHealth(s, ProbeVerdictsOf(probes), judged, "", smart_ran);
}

std::string DevicesSection(const Snapshot& s, const HostHealth& health) {
  std::string headers;
  for (const PageColumn& column : kDeviceColumns)
    headers += fmt::format("<th>{}</th>", column.header);
  std::string rows;
  for (const DeviceSnapshot& d : s.devices) {
    rows += fmt::format("<tr><td>{}</td>", HtmlEscape(d.name));
    if (!d.has_rates) {
      rows +=
          fmt::format("<td colspan=\"{}\" class=\"dim\">first sample: rates from the next one</td>",
                      std::size(kDeviceColumns) + 1);
    } else {
      for (const PageColumn& column : kDeviceColumns) {
        rows += Cell(d.latest, IostatColumnIndex(column.column), column);
      }
      rows += Cell(d.window_max, IostatColumnIndex(kUtilization.column), kUtilization);
    }
    rows += HealthCell(FindDisk(health, d.name)) + "</tr>\n";
  }
  return fmt::format(
      "<h2>Devices ({})</h2>\n<table id=\"devices\"><tr><th>device</th>{}"
      "<th>{} {:.0f}s</th><th>health</th></tr>\n{}</table>\n",
      s.devices.size(), headers, kUtilization.header, s.window_seconds, rows);
}

// The cgroups doing the most I/O (daemon/sampling/cgroup_top.h), under the devices.
std::string TopIoSection(const Snapshot& s) {
  constexpr size_t kRows = 10;
  const std::vector<CgroupTopRow> top = CgroupTop(s, "");
  if (top.empty()) return {};
  std::string rows;
  for (size_t i = 0; i < std::min(kRows, top.size()); ++i) {
    const CgroupTopRow& r = top[i];
    rows += fmt::format("<tr><td>{}</td>{}{}{}{}{}</tr>\n", HtmlEscape(r.cgroup),
                        Cell(r.read_bytes_per_second / 1024, 1),
                        Cell(r.write_bytes_per_second / 1024, 1), Cell(r.reads_per_second, 1),
                        Cell(r.writes_per_second, 1),
                        r.pressure_some_avg10 ? Cell(*r.pressure_some_avg10, 2)
                                              : std::string("<td class=\"dim\">–</td>"));
  }
  return fmt::format(
      "<h2>Top I/O (cgroups)</h2>\n<table id=\"top-io\"><tr><th>cgroup</th><th>rkB/s</th>"
      "<th>wkB/s</th><th>r/s</th><th>w/s</th><th>%psi</th></tr>\n{}</table>\n",
      rows);
}

// `iowatch advise`'s findings for the disks (SnapshotAdvice), worst first;
// nothing when there are none.
std::string AdviceSection(const Snapshot& s) {
  std::vector<advice::AdviceFinding> findings = SnapshotAdvice(s);
  if (findings.empty()) return {};
  std::ranges::stable_sort(findings, std::greater<>(), &advice::AdviceFinding::severity);
  std::string rows;
  for (const advice::AdviceFinding& f : findings) {
    rows += fmt::format(
        "<tr><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}<br><span "
        "class=\"dim\">{}</span></td></tr>\n",
        f.severity == advice::Severity::kInfo ? "dim" : "bad", advice::ToString(f.severity),
        HtmlEscape(f.device), f.finding, HtmlEscape(f.text), HtmlEscape(f.suggestion));
  }
  return "<h2>Advice</h2>\n<p class=\"dim\">iowatch advise: each disk's geometry and settings "
         "against the request sizes it received since boot.</p>\n<table><tr><th>severity</th>"
         "<th>device</th><th>finding</th><th>what holds, and the change</th></tr>\n" +
         rows + "</table>\n";
}

// The block_io source's (eBPF) p50 and p99 over the last interval, from the kernel's
// fine histogram (4 buckets per power of two: a quantile is its bucket's
// upper bound), per disk and op, device and total stages side by side.
std::string BlockLatencySection(const Snapshot& s) {
  namespace bpf = collectors::bpf;
  const auto quantiles = [](const BlockLatencySeries* series) {
    const auto cell = [](std::optional<double> seconds) {
      return seconds ? Cell(*seconds * 1e6, 1) : std::string("<td class=\"dim\">–</td>");
    };
    if (series == nullptr) return cell({}) + cell({});
    return cell(series->p50_seconds) + cell(series->p99_seconds);
  };
  std::string rows;
  const auto& all = s.block_io.latency;
  for (size_t i = 0; i < all.size();) {  // sorted by device and op, stages in order
    const BlockLatencySeries* stage[bpf::kBlockStages] = {};
    const size_t first = i;
    for (; i < all.size() && all[i].device == all[first].device && all[i].op == all[first].op;
         ++i) {
      stage[static_cast<size_t>(all[i].stage)] = &all[i];
    }
    rows += fmt::format("<tr><td>{}</td><td>{}</td>{}{}</tr>\n", HtmlEscape(all[first].device),
                        bpf::ToString(all[first].op),
                        quantiles(stage[static_cast<size_t>(bpf::BlockStage::kDevice)]),
                        quantiles(stage[static_cast<size_t>(bpf::BlockStage::kTotal)]));
  }
  if (rows.empty()) return {};
  return fmt::format(
      "<h2>Block latency (eBPF, last interval)</h2>\n<table id=\"block-latency\"><tr>"
      "<th>device</th><th>op</th><th>device p50 µs</th><th>device p99 µs</th>"
      "<th>total p50 µs</th><th>total p99 µs</th></tr>\n{}</table>\n",
      rows);
}

std::string VmstatSection(const Snapshot& s) {
  if (!s.has_vm_rates) {
    return "<h2>Memory and CPU</h2>\n<p class=\"dim\">first sample: rates from the next one</p>\n";
  }
  std::string headers, cells;
  for (const PageColumn& column : kVmstatColumns) {
    headers += fmt::format("<th>{}</th>", column.header);
    cells += Cell(s.vm_latest, VmstatColumnIndex(column.column), column);
  }
  return fmt::format(
      "<h2>Memory and CPU</h2>\n<table id=\"vmstat\"><tr>{}</tr>\n<tr>{}</tr></table>\n", headers,
      cells);
}

std::optional<double> Metric(const std::vector<probes::MetricSample>& metrics, std::string_view op,
                             std::string_view metric) {
  for (const probes::MetricSample& m : metrics) {
    if (m.op == op && m.metric == metric) return m.value;
  }
  return std::nullopt;
}

std::optional<double> Baseline(const ProbeJobSnapshot& job, std::string_view op,
                               std::string_view metric) {
  for (const probes::MetricBaseline& b : job.baseline) {
    if (b.op == op && b.metric == metric) return b.median;
  }
  return std::nullopt;
}

std::string Optional(std::optional<double> value, double scale, int decimals) {
  if (!value) return "<td class=\"dim\">–</td>";
  return Cell(*value * scale, decimals);
}

// The op's regressions; else why the last run was not judged (contended
// without a baseline for its band, a wait for the CPU, unknown conditions,
// still learning); else ok, with the band it was judged in when contended.
std::string ProbeState(const ProbeJobSnapshot& job, std::string_view op) {
  std::string regressed;
  for (const ProbeVerdict& v : job.verdicts) {
    if (v.verdict.op != op || !v.regressed) continue;
    if (!regressed.empty()) regressed += ", ";
    regressed += HtmlEscape(v.verdict.metric);
  }
  if (!regressed.empty()) return "<td class=\"bad\">regressed: " + regressed + "</td>";
  if (!job.last_judged) {
    if (job.last_not_judged.empty()) return "<td class=\"dim\">learning the baseline</td>";
    const std::string who =
        job.last_foreign_who.empty() ? "" : "; " + HtmlEscape(job.last_foreign_who);
    return "<td class=\"dim\">not judged: " + HtmlEscape(job.last_not_judged) + who + "</td>";
  }
  if (job.last_class.run_class == probes::RunClass::kContended) {
    const std::string who =
        job.last_foreign_who.empty() ? "" : "; " + HtmlEscape(job.last_foreign_who);
    const std::string against = job.last_against.empty()
                                    ? fmt::format("load band {}", job.last_class.band)
                                    : "against " + HtmlEscape(job.last_against);
    return fmt::format("<td class=\"good\">ok ({}: {}{})</td>", against,
                       HtmlEscape(job.last_class.load), who);
  }
  return "<td class=\"good\">ok</td>";
}

// How much of the last day was judged: "40 % of 96 runs; last 2 h ago;
// mostly cpu_contended"; marked bad when nothing was judged for a day.
std::string JudgedCell(const ProbeJobSnapshot& job, double now_seconds) {
  const probes::JudgedSummary& s = job.judging;
  if (s.runs == 0) return "<td class=\"dim\">no run in 24 h</td>";
  std::string text =
      fmt::format("{:.0f} % of {} runs",
                  100.0 * static_cast<double>(s.judged) / static_cast<double>(s.runs), s.runs);
  const double last_age = s.last_judged_unix_ms > 0
                              ? now_seconds - static_cast<double>(s.last_judged_unix_ms) / 1000
                              : -1;
  // "2h13m ago": whole minutes, or seconds under a minute.
  const auto ago = [](double seconds) {
    const auto unit = seconds >= 60 ? 60'000 : 1000;
    const auto ms = static_cast<int64_t>(std::max(0.0, seconds) * 1000) / unit * unit;
    return FormatDuration(std::chrono::milliseconds(ms)) + " ago";
  };
  text += last_age < 0 ? "; never judged" : "; last " + ago(last_age);
  const auto dominant =
      std::ranges::max_element(s.not_judged, {}, &std::pair<std::string, uint64_t>::second);
  if (dominant != s.not_judged.end() && dominant->second > 0) {
    text += "; mostly " + HtmlEscape(dominant->first);
  }
  const bool silent = last_age < 0 || last_age > 24 * 3600;
  return fmt::format("<td class=\"{}\">{}</td>", silent ? "bad" : "dim", text);
}

std::string ProbesSection(const ProbeSnapshot& p, const StatusPageInput& in,
                          const HostHealth& health) {
  const double now_seconds = in.now_seconds;
  std::string rows;
  for (const ProbeJobSnapshot& job : p.jobs) {
    if (job.last_metrics.empty()) {
      rows += fmt::format(
          "<tr class=\"probe\"><td>{}</td><td colspan=\"11\" class=\"dim\">no successful run "
          "yet</td></tr>\n",
          HtmlEscape(job.name));
      continue;
    }
    const std::string age =
        fmt::format("{:.0f} s ago", std::max(0.0, now_seconds - job.last_run_timestamp_seconds));
    for (const ProbeRecentSeries& series : job.recent) {
      const std::string& op = series.op;
      const auto iops = Metric(job.last_metrics, op, "iops");
      const auto base_iops = Baseline(job, op, "iops");
      const std::optional<double> ratio =
          iops && base_iops && *base_iops > 0 ? std::optional(*iops / *base_iops) : std::nullopt;
      const std::string figures =
          Optional(iops, 1, 0) + Optional(base_iops, 1, 0) +
          Optional(Metric(job.last_metrics, op, "lat_p50_seconds"), 1e6, 1) +
          Optional(Metric(job.last_metrics, op, "lat_p99_seconds"), 1e6, 1) +
          Optional(Baseline(job, op, "lat_p99_seconds"), 1e6, 1) + Optional(ratio, 1, 2);
      rows += fmt::format(
          "<tr class=\"probe\"><td>{}</td><td>{}</td><td>{}</td>{}{}{}<td>{}</td></tr>\n",
          HtmlEscape(job.name), HtmlEscape(op), age, figures, ProbeState(job, op),
          JudgedCell(job, now_seconds), Sparkline(series.clat_p99_seconds, 160, 28));
    }
    rows += RegressionRows(job, in, health);
  }
  return fmt::format(
      "<h2>Probes</h2>\n<p>Store: {}.</p>\n<table id=\"probes\"><tr><th>probe</th><th>op</th>"
      "<th>last run</th><th>IOPS</th><th>baseline IOPS</th><th>lat p50 µs</th>"
      "<th>lat p99 µs</th><th>baseline p99 µs</th><th>IOPS ratio</th><th>state</th>"
      "<th>judged, last 24 h</th>"
      "<th>clat p99, last {} runs</th></tr>\n{}</table>\n",
      p.store_up ? "<span class=\"good\">writable</span>"
                 : fmt::format("<span class=\"bad\">not writable ({} failed runs)</span>",
                               p.store_errors_total),
      kRecentRuns, rows);
}

}  // namespace

std::string Sparkline(const std::vector<double>& values, int width, int height) {
  if (values.size() < 2) return {};
  const auto [lo, hi] = std::ranges::minmax(values);
  const double span = hi > lo ? hi - lo : 1;
  std::string points;
  for (size_t i = 0; i < values.size(); ++i) {
    const double x =
        static_cast<double>(i) * (width - 2) / static_cast<double>(values.size() - 1) + 1;
    const double y = (height - 2) - (values[i] - lo) / span * (height - 4) + 1;
    points += fmt::format("{}{:.1f},{:.1f}", i == 0 ? "" : " ", x, y);
  }
  return fmt::format(
      "<svg class=\"spark\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\">"
      "<title>{2:.1f} µs to {3:.1f} µs</title><polyline fill=\"none\" stroke=\"#2a6fdb\" "
      "stroke-width=\"1.5\" points=\"{4}\"/></svg>",
      width, height, lo * 1e6, hi * 1e6, points);
}

std::string RenderStatusPage(const StatusPageInput& in) {
  std::string body = fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"refresh\" content=\"{}\"><title>iowatch</title><style>"
      "body{{font-family:sans-serif;margin:1.5em;color:#222}}"
      "table{{border-collapse:collapse;margin-bottom:1em}}"
      "td,th{{padding:3px 9px;text-align:left;border-bottom:1px solid #ddd}}"
      "td.n{{text-align:right;font-variant-numeric:tabular-nums}}"
      ".dim{{color:#888}}.good{{color:#1a7f37}}.bad{{color:#c62828;font-weight:bold}}"
      "</style></head>\n<body><h1>iowatch {}</h1>\n<p>Listening on {}; sample every {:g} s, "
      "maxima over {:g} s. <a href=\"/metrics\">/metrics</a> · <a href=\"/healthz\">/healthz</a>"
      "</p>\n",
      kRefreshSeconds, kVersion, HtmlEscape(in.listen_endpoint), in.sample.interval_seconds,
      in.sample.window_seconds);
  const HostHealth health = HealthOf(in.sample, in.probes, in.passive);
  body += DevicesSection(in.sample, health);
  body += MdSection(health);
  body += ThinPoolSection(health);
  body += StorageStackSections(health);
  body += TopIoSection(in.sample);
  body += BlockLatencySection(in.sample);
  if (in.passive != nullptr) body += PassiveSection(*in.passive);
  body += AdviceSection(in.sample);
  body += VmstatSection(in.sample);
  if (in.probes != nullptr) body += ProbesSection(*in.probes, in, health);
  body += "</body></html>\n";
  return body;
}

}  // namespace iowatch::daemon
