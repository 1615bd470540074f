#include "cli/sweep/sweep_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "common/markup.h"

namespace iowatch::daemon {
namespace {

using probes::SweepSample;

constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr int kPanelWidth = 420;
constexpr int kPanelHeight = 240;
constexpr int kMargin = 55;
constexpr int kRowHeight = kPanelHeight + 2 * kMargin;

struct Panel {
  int x0 = 0;  // the plot area's left, top, width, height
  int y0 = 0;
  double lo = 0;  // the y range (log10 for p99)
  double hi = 1;
  bool log = false;
  double step = 1;  // between two ticks (linear: a round number; log: a decade)
};

// A linear panel from 0 to a round number at or above `max`, ticked every
// 1, 2 or 5 × 10^k so that it has at most 5 intervals.
Panel LinearPanel(int x0, int y0, double max) {
  const double raw = std::max(max, 1e-9) / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * magnitude;
  for (const double m : {1.0, 2.0, 5.0}) {
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  }
  return {x0, y0, 0, std::ceil(max / step - 1e-9) * step, false, step};
}

// A log panel over whole decades, from 1 to the first power of 10 at or above `max`.
Panel LogPanel(int x0, int y0, double max) {
  return {x0, y0, 0, std::max(1.0, std::ceil(std::log10(std::max(max, 1.0)) - 1e-9)), true, 1};
}

double X(const Panel& p, size_t i, size_t count) {
  return p.x0 + (count > 1 ? kPanelWidth * static_cast<double>(i) / static_cast<double>(count - 1)
                           : kPanelWidth / 2.0);
}

double Scale(const Panel& p, double value) {
  const double v = p.log ? std::log10(std::max(value, 1.0)) : value;
  const double share = p.hi > p.lo ? (v - p.lo) / (p.hi - p.lo) : 0;
  return p.y0 + kPanelHeight - share * kPanelHeight;
}

void Axes(std::string& out, const Panel& p, const std::string& title,
          const std::vector<uint64_t>& sizes) {
  fmt::format_to(std::back_inserter(out),
                 "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                 "stroke=\"#999\"/>\n<text x=\"{}\" y=\"{}\" font-size=\"13\">{}</text>\n",
                 p.x0, p.y0, kPanelWidth, kPanelHeight, p.x0, p.y0 - 8, HtmlEscape(title));
  for (size_t i = 0; i < sizes.size(); ++i) {
    fmt::format_to(
        std::back_inserter(out),
        "<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n",
        X(p, i, sizes.size()), p.y0 + kPanelHeight + 15, probes::SizeText(sizes[i]));
  }
  // Round values only: multiples of the linear step, or whole decades; a
  // faint grid line at each.
  const int ticks = static_cast<int>(std::lround((p.hi - p.lo) / p.step));
  const int decimals = p.log || p.step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(p.step)));
  for (int tick = 0; tick <= ticks; ++tick) {
    const double v = p.lo + p.step * tick;
    const double shown = p.log ? std::pow(10.0, v) : v;
    const double y = Scale(p, shown);
    fmt::format_to(std::back_inserter(out),
                   "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>\n"
                   "<text x=\"{3}\" y=\"{4:.1f}\" font-size=\"10\" text-anchor=\"end\">{5:.{6}f}"
                   "</text>\n",
                   p.x0, y, p.x0 + kPanelWidth, p.x0 - 4, y + 3, shown, decimals);
  }
}

// A line through `points` ("x,y x,y …") with a dot at each.
void Series(std::string& out, const char* color, const std::vector<std::pair<double, double>>& at) {
  std::string points;
  for (const auto& [x, y] : at) points += fmt::format("{:.1f},{:.1f} ", x, y);
  fmt::format_to(std::back_inserter(out),
                 "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n",
                 color, points);
  for (const auto& [x, y] : at) {
    fmt::format_to(std::back_inserter(out),
                   "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", x, y, color);
  }
}

using SeriesKey = std::tuple<probes::SweepMode, bool, bool>;

std::string SeriesTitle(const SeriesKey& key) {
  return fmt::format("{} {}{}", probes::ToString(std::get<0>(key)),
                     std::get<2>(key) ? "rand" : "seq", std::get<1>(key) ? "write" : "read");
}

// One chart row: bandwidth (MiB/s) and p99 (µs, log) against bs, a line
// with a dot per point for each depth, and the depths' legend at the right.
void ChartRow(std::string& out, int top, const SeriesKey& key, probes::SweepLatency latency,
              const std::vector<const SweepSample*>& samples) {
  std::set<uint64_t> size_set;
  std::set<uint32_t> depths;
  double max_mib = 1;
  double max_p99_us = 10;
  for (const SweepSample* s : samples) {
    size_set.insert(s->point.block_size);
    depths.insert(s->point.iodepth);
    max_mib = std::max(max_mib, s->measure.bytes_per_second / (1 << 20));
    max_p99_us = std::max(max_p99_us, static_cast<double>(s->measure.P99(latency)) / 1e3);
  }
  const std::vector<uint64_t> sizes(size_set.begin(), size_set.end());
  const Panel bw = LinearPanel(kMargin, top + kMargin, max_mib);
  const Panel p99 = LogPanel(kMargin * 2 + kPanelWidth, top + kMargin, max_p99_us);
  Axes(out, bw, SeriesTitle(key) + ": bandwidth MiB/s against bs", sizes);
  Axes(out, p99, fmt::format("{}: {} p99 µs against bs", SeriesTitle(key), ToString(latency)),
       sizes);
  const int legend_x = kMargin * 2 + 2 * kPanelWidth + 15;
  fmt::format_to(std::back_inserter(out),
                 "<text x=\"{}\" y=\"{}\" font-size=\"11\">iodepth</text>\n", legend_x,
                 top + kMargin + 10);
  size_t color = 0;
  for (const uint32_t depth : depths) {
    std::vector<std::pair<double, double>> bw_at;
    std::vector<std::pair<double, double>> p99_at;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const auto it = std::ranges::find_if(samples, [&](const SweepSample* s) {
        return s->point.block_size == sizes[i] && s->point.iodepth == depth;
      });
      if (it == samples.end()) continue;
      const probes::SweepMeasure& m = (*it)->measure;
      bw_at.emplace_back(X(bw, i, sizes.size()), Scale(bw, m.bytes_per_second / (1 << 20)));
      p99_at.emplace_back(X(p99, i, sizes.size()),
                          Scale(p99, static_cast<double>(m.P99(latency)) / 1e3));
    }
    const char* stroke = kPalette[color % std::size(kPalette)];
    Series(out, stroke, bw_at);
    Series(out, stroke, p99_at);
    const int y = top + kMargin + 16 * static_cast<int>(color + 1) + 10;
    fmt::format_to(std::back_inserter(out),
                   "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" "
                   "stroke-width=\"2\"/>\n<circle cx=\"{4}\" cy=\"{1}\" r=\"3\" fill=\"{3}\"/>\n"
                   "<text x=\"{5}\" y=\"{6}\" font-size=\"11\">QD{7}</text>\n",
                   legend_x, y - 4, legend_x + 20, stroke, legend_x + 10, legend_x + 26, y, depth);
    ++color;
  }
}

}  // namespace

std::string SweepTable(const probes::SweepReport& r) {
  std::string out = fmt::format("sweep of {} ({}{}{}), {}, {} per point\n", r.target, r.device,
                                r.identity.empty() ? "" : ": ", r.identity, r.engine,
                                fmt::format("{} ms", r.point_runtime_ms));
  const std::string_view kind = probes::ToString(r.latency);
  out += fmt::format("{:<9} {:<10} {:>5} {:>4} {:>10} {:>11} {:>11} {:>11} {:>6} {:>9}\n", "mode",
                     "rw", "bs", "qd", "IOPS", "bandwidth", fmt::format("{} p50 µs", kind),
                     fmt::format("{} p99 µs", kind), "CPU %", "CPU s/GiB");
  for (const SweepSample& s : r.samples) {
    const probes::SweepMeasure& m = s.measure;
    out += fmt::format(
        "{:<9} {:<10} {:>5} {:>4} {:>10.0f} {:>11} {:>11.1f} {:>11.1f} {:>6.1f} "
        "{:>9.3f}{}\n",
        probes::ToString(s.point.mode),
        fmt::format("{}{}", s.point.random ? "rand" : "seq", s.point.write ? "write" : "read"),
        probes::SizeText(s.point.block_size), s.point.iodepth, m.iops,
        probes::RateText(m.bytes_per_second), static_cast<double>(m.P50(r.latency)) / 1e3,
        static_cast<double>(m.P99(r.latency)) / 1e3, m.cpu_percent, m.cpu_seconds_per_gib,
        m.end == "completed" ? "" : "  (" + m.end + ")");
  }
  out += "\nfindings:\n";
  for (const probes::SweepFinding& f : r.findings) out += "  " + f.text + "\n";
  return out;
}

std::string SweepSvg(const probes::SweepReport& r) {
  std::map<SeriesKey, std::vector<const SweepSample*>> series;
  for (const SweepSample& s : r.samples) {
    if (s.measure.end == "completed") {
      series[{s.point.mode, s.point.write, s.point.random}].push_back(&s);
    }
  }
  const int width = kMargin * 2 + 2 * kPanelWidth + 100;
  const int height = 30 + kRowHeight * static_cast<int>(std::max<size_t>(series.size(), 1));
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"10\" y=\"20\" font-size=\"14\">iowatch sweep of {2} ({3} {4}), {5}, {6} ms per "
      "point</text>\n",
      width, height, HtmlEscape(r.target), HtmlEscape(r.device),
      HtmlEscape(r.identity), HtmlEscape(r.engine), r.point_runtime_ms);
  int top = 30;
  for (const auto& [key, samples] : series) {
    ChartRow(out, top, key, r.latency, samples);
    top += kRowHeight;
  }
  out += "</svg>\n";
  return out;
}

}  // namespace iowatch::daemon
