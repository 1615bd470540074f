#include "daemon/cli/sweep/sweep_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "common/markup.h"
#include "common/utf8.h"

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
};

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
    const double x = p.x0 + (sizes.size() > 1 ? kPanelWidth * static_cast<double>(i) /
                                                    static_cast<double>(sizes.size() - 1)
                                              : kPanelWidth / 2.0);
    fmt::format_to(
        std::back_inserter(out),
        "<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n", x,
        p.y0 + kPanelHeight + 15, probes::SizeText(sizes[i]));
  }
  // Linear: quarters of the range; log: every decade.
  const int ticks = p.log ? static_cast<int>(p.hi - p.lo) : 4;
  for (int tick = 0; tick <= ticks; ++tick) {
    const double v = p.lo + (p.hi - p.lo) * tick / std::max(ticks, 1);
    const double shown = p.log ? std::pow(10.0, v) : v;
    fmt::format_to(
        std::back_inserter(out),
        "<text x=\"{}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"end\">{:.0f}</text>\n",
        p.x0 - 4, Scale(p, shown) + 3, shown);
  }
}

using SeriesKey = std::tuple<probes::SweepMode, bool, bool>;

std::string SeriesTitle(const SeriesKey& key) {
  return fmt::format("{} {}{}", probes::ToString(std::get<0>(key)),
                     std::get<2>(key) ? "rand" : "seq", std::get<1>(key) ? "write" : "read");
}

// One chart row: bandwidth (MiB/s) and p99 (µs, log) against bs, a line per depth.
void ChartRow(std::string& out, int top, const SeriesKey& key,
              const std::vector<const SweepSample*>& samples) {
  std::set<uint64_t> size_set;
  std::set<uint32_t> depths;
  double max_mib = 1;
  double max_p99_us = 10;
  for (const SweepSample* s : samples) {
    size_set.insert(s->point.block_size);
    depths.insert(s->point.iodepth);
    max_mib = std::max(max_mib, s->measure.bytes_per_second / (1 << 20));
    max_p99_us = std::max(max_p99_us, static_cast<double>(s->measure.clat_p99_ns) / 1e3);
  }
  const std::vector<uint64_t> sizes(size_set.begin(), size_set.end());
  const Panel bw{kMargin, top + kMargin, 0, max_mib * 1.05, false};
  const Panel p99{kMargin * 2 + kPanelWidth, top + kMargin, 0, std::ceil(std::log10(max_p99_us)),
                  true};
  Axes(out, bw, SeriesTitle(key) + ": bandwidth MiB/s against bs", sizes);
  Axes(out, p99, SeriesTitle(key) + ": clat p99 µs against bs", sizes);
  size_t color = 0;
  for (const uint32_t depth : depths) {
    std::string bw_points;
    std::string p99_points;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const auto it = std::ranges::find_if(samples, [&](const SweepSample* s) {
        return s->point.block_size == sizes[i] && s->point.iodepth == depth;
      });
      if (it == samples.end()) continue;
      const double x = bw.x0 + (sizes.size() > 1 ? kPanelWidth * static_cast<double>(i) /
                                                       static_cast<double>(sizes.size() - 1)
                                                 : kPanelWidth / 2.0);
      bw_points +=
          fmt::format("{:.1f},{:.1f} ", x, Scale(bw, (*it)->measure.bytes_per_second / (1 << 20)));
      p99_points += fmt::format("{:.1f},{:.1f} ", x - bw.x0 + p99.x0,
                                Scale(p99, static_cast<double>((*it)->measure.clat_p99_ns) / 1e3));
    }
    const char* stroke = kPalette[color % std::size(kPalette)];
    fmt::format_to(std::back_inserter(out),
                   "<polyline fill=\"none\" stroke=\"{0}\" stroke-width=\"2\" points=\"{1}\"/>\n"
                   "<polyline fill=\"none\" stroke=\"{0}\" stroke-width=\"2\" points=\"{2}\"/>\n"
                   "<text x=\"{3}\" y=\"{4}\" font-size=\"11\" fill=\"{0}\">QD{5}</text>\n",
                   stroke, bw_points, p99_points, kMargin * 3 + 2 * kPanelWidth,
                   top + kMargin + 14 * static_cast<int>(color) + 10, depth);
    ++color;
  }
}

}  // namespace

std::string SweepTable(const probes::SweepReport& r) {
  std::string out = fmt::format("sweep of {} ({}{}{}), {}, {} per point\n", r.target, r.device,
                                r.identity.empty() ? "" : ": ", r.identity, r.engine,
                                fmt::format("{} ms", r.point_runtime_ms));
  out +=
      fmt::format("{:<9} {:<10} {:>5} {:>4} {:>10} {:>11} {:>9} {:>9} {:>6} {:>9}\n", "mode", "rw",
                  "bs", "qd", "IOPS", "bandwidth", "p50 µs", "p99 µs", "CPU %", "CPU s/GiB");
  for (const SweepSample& s : r.samples) {
    const probes::SweepMeasure& m = s.measure;
    out += fmt::format(
        "{:<9} {:<10} {:>5} {:>4} {:>10.0f} {:>11} {:>9.1f} {:>9.1f} {:>6.1f} "
        "{:>9.3f}{}\n",
        probes::ToString(s.point.mode),
        fmt::format("{}{}", s.point.random ? "rand" : "seq", s.point.write ? "write" : "read"),
        probes::SizeText(s.point.block_size), s.point.iodepth, m.iops,
        probes::RateText(m.bytes_per_second), static_cast<double>(m.clat_p50_ns) / 1e3,
        static_cast<double>(m.clat_p99_ns) / 1e3, m.cpu_percent, m.cpu_seconds_per_gib,
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
  const int width = kMargin * 4 + 2 * kPanelWidth + 40;
  const int height = 30 + kRowHeight * static_cast<int>(std::max<size_t>(series.size(), 1));
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"10\" y=\"20\" font-size=\"14\">iowatch sweep of {2} ({3} {4}), {5}, {6} ms per "
      "point</text>\n",
      width, height, HtmlEscape(ToValidUtf8(r.target)), HtmlEscape(r.device),
      HtmlEscape(r.identity), HtmlEscape(r.engine), r.point_runtime_ms);
  int top = 30;
  for (const auto& [key, samples] : series) {
    ChartRow(out, top, key, samples);
    top += kRowHeight;
  }
  out += "</svg>\n";
  return out;
}

}  // namespace iowatch::daemon
