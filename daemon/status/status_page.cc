#include "daemon/status/status_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/version.h"
#include "daemon/sampling/derived_series.h"

namespace iowatch::daemon {
namespace {

constexpr int kRefreshSeconds = 10;

// Where the page's iostat columns sit in DeviceSnapshot::latest.
struct IostatColumns {
  size_t reads, writes, read_bytes, write_bytes, read_await, write_await, queue, util;
};

size_t IostatIndex(std::string_view metric, const char* op) {
  const auto table = IostatSeriesTable();
  for (size_t i = 0; i < table.size(); ++i) {
    const bool same_op = (op == nullptr) == (table[i].op == nullptr) &&
                         (op == nullptr || std::string_view(op) == table[i].op);
    if (metric == table[i].metric && same_op) return i;
  }
  return table.size();  // never: the names below are the table's
}

const IostatColumns& Columns() {
  static const IostatColumns columns{
      IostatIndex("iowatch_iostat_requests_per_second", "read"),
      IostatIndex("iowatch_iostat_requests_per_second", "write"),
      IostatIndex("iowatch_iostat_bytes_per_second", "read"),
      IostatIndex("iowatch_iostat_bytes_per_second", "write"),
      IostatIndex("iowatch_iostat_await_seconds", "read"),
      IostatIndex("iowatch_iostat_await_seconds", "write"),
      IostatIndex("iowatch_iostat_queue_size", nullptr),
      IostatIndex("iowatch_iostat_utilization_ratio", nullptr),
  };
  return columns;
}

double At(const std::vector<double>& values, size_t i) { return i < values.size() ? values[i] : 0; }

std::string Cell(double value, int decimals) {
  return fmt::format("<td class=\"n\">{:.{}f}</td>", value, decimals);
}

std::string DevicesSection(const Snapshot& s) {
  const IostatColumns& c = Columns();
  std::string rows;
  for (const DeviceSnapshot& d : s.devices) {
    rows += fmt::format("<tr><td>{}</td>", HtmlEscape(d.name));
    if (!d.has_rates) {
      rows += "<td colspan=\"9\" class=\"dim\">first sample: rates from the next one</td></tr>\n";
      continue;
    }
    const auto& v = d.latest;
    rows += Cell(At(v, c.reads), 2) + Cell(At(v, c.read_bytes) / 1024, 2) +
            Cell(At(v, c.read_await) * 1000, 2) + Cell(At(v, c.writes), 2) +
            Cell(At(v, c.write_bytes) / 1024, 2) + Cell(At(v, c.write_await) * 1000, 2) +
            Cell(At(v, c.queue), 2) + Cell(At(v, c.util) * 100, 2) +
            Cell(At(d.window_max, c.util) * 100, 2) + "</tr>\n";
  }
  return fmt::format(
      "<h2>Devices ({})</h2>\n<table id=\"devices\"><tr><th>device</th><th>r/s</th>"
      "<th>rkB/s</th><th>r_await ms</th><th>w/s</th><th>wkB/s</th><th>w_await ms</th>"
      "<th>aqu-sz</th><th>%util</th><th>%util max {:.0f}s</th></tr>\n{}</table>\n",
      s.devices.size(), s.window_seconds, rows);
}

std::string VmstatSection(const Snapshot& s) {
  if (!s.has_vm_rates) {
    return "<h2>Memory and CPU</h2>\n<p class=\"dim\">first sample: rates from the next one</p>\n";
  }
  // vmstat's columns in its order; memory in MiB, swap and io in kB/s, CPU in percent.
  struct Column {
    const char* header;
    const char* metric;
    const char* label;
    double scale;
  };
  static constexpr Column kColumns[] = {
      {"r", "iowatch_vm_procs_running", nullptr, 1},
      {"b", "iowatch_vm_procs_blocked", nullptr, 1},
      {"swpd MiB", "iowatch_vm_memory_bytes", "swap_used", 1.0 / 1048576},
      {"free MiB", "iowatch_vm_memory_bytes", "free", 1.0 / 1048576},
      {"buff MiB", "iowatch_vm_memory_bytes", "buffers", 1.0 / 1048576},
      {"cache MiB", "iowatch_vm_memory_bytes", "cache", 1.0 / 1048576},
      {"si kB/s", "iowatch_vm_swap_bytes_per_second", "in", 1.0 / 1024},
      {"so kB/s", "iowatch_vm_swap_bytes_per_second", "out", 1.0 / 1024},
      {"bi kB/s", "iowatch_vm_io_bytes_per_second", "in", 1.0 / 1024},
      {"bo kB/s", "iowatch_vm_io_bytes_per_second", "out", 1.0 / 1024},
      {"in", "iowatch_vm_interrupts_per_second", nullptr, 1},
      {"cs", "iowatch_vm_context_switches_per_second", nullptr, 1},
      {"us", "iowatch_vm_cpu_ratio", "user", 100},
      {"sy", "iowatch_vm_cpu_ratio", "system", 100},
      {"id", "iowatch_vm_cpu_ratio", "idle", 100},
      {"wa", "iowatch_vm_cpu_ratio", "iowait", 100},
      {"st", "iowatch_vm_cpu_ratio", "steal", 100},
  };
  const auto table = VmstatSeriesTable();
  std::string headers, cells;
  for (const Column& column : kColumns) {
    const auto it = std::ranges::find_if(table, [&](const VmstatSeries& series) {
      return std::string_view(series.metric) == column.metric &&
             (column.label == nullptr || (series.label_value != nullptr &&
                                          std::string_view(series.label_value) == column.label));
    });
    const auto index = static_cast<size_t>(it - table.begin());
    headers += fmt::format("<th>{}</th>", column.header);
    cells += Cell(At(s.vm_latest, index) * column.scale, column.scale == 1 ? 0 : 1);
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

std::string ProbeState(const ProbeJobSnapshot& job, std::string_view op) {
  if (!job.has_baseline) return "<td class=\"dim\">learning the baseline</td>";
  std::string regressed;
  for (const ProbeVerdict& v : job.verdicts) {
    if (v.verdict.op != op || !v.regressed) continue;
    if (!regressed.empty()) regressed += ", ";
    regressed += HtmlEscape(v.verdict.metric);
  }
  if (regressed.empty()) return "<td class=\"good\">ok</td>";
  return "<td class=\"bad\">regressed: " + regressed + "</td>";
}

std::string ProbesSection(const ProbeSnapshot& p, double now_seconds) {
  std::string rows;
  for (const ProbeJobSnapshot& job : p.jobs) {
    if (job.last_metrics.empty()) {
      rows += fmt::format(
          "<tr class=\"probe\"><td>{}</td><td colspan=\"10\" class=\"dim\">no successful run "
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
      rows += fmt::format(
          "<tr class=\"probe\"><td>{}</td><td>{}</td><td>{}</td>{}{}{}{}{}{}{}<td>{}</td></tr>\n",
          HtmlEscape(job.name), HtmlEscape(op), age, Optional(iops, 1, 0),
          Optional(base_iops, 1, 0),
          Optional(Metric(job.last_metrics, op, "clat_p50_seconds"), 1e6, 1),
          Optional(Metric(job.last_metrics, op, "clat_p99_seconds"), 1e6, 1),
          Optional(Baseline(job, op, "clat_p99_seconds"), 1e6, 1), Optional(ratio, 1, 2),
          ProbeState(job, op), Sparkline(series.clat_p99_seconds, 160, 28));
    }
  }
  return fmt::format(
      "<h2>Probes</h2>\n<p>Store: {}.</p>\n<table id=\"probes\"><tr><th>probe</th><th>op</th>"
      "<th>last run</th><th>IOPS</th><th>baseline IOPS</th><th>clat p50 µs</th>"
      "<th>clat p99 µs</th><th>baseline p99 µs</th><th>IOPS ratio</th><th>state</th>"
      "<th>p99, last {} runs</th></tr>\n{}</table>\n",
      p.store_up ? "<span class=\"good\">writable</span>"
                 : fmt::format("<span class=\"bad\">not writable ({} failed runs)</span>",
                               p.store_errors_total),
      kRecentRuns, rows);
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

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
  body += DevicesSection(in.sample);
  body += VmstatSection(in.sample);
  if (in.probes != nullptr) body += ProbesSection(*in.probes, in.now_seconds);
  body += "</body></html>\n";
  return body;
}

}  // namespace iowatch::daemon
