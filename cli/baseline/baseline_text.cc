#include "cli/baseline/baseline_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/terminal_text.h"

namespace iowatch::daemon {
namespace {

// "clat_p99_9_seconds" -> "clat p99.9".
std::string Humanize(std::string_view metric) {
  for (std::string_view suffix : {"_seconds", "_bytes"}) {
    if (metric.ends_with(suffix)) metric.remove_suffix(suffix.size());
  }
  std::string out(metric);
  if (const size_t at = out.find("p99_9"); at != std::string::npos) out[at + 3] = '.';
  std::ranges::replace(out, '_', ' ');
  return out;
}

}  // namespace

size_t DisplayWidth(std::string_view text) {
  return static_cast<size_t>(std::ranges::count_if(
      text, [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

void Pad(std::string& out, std::string_view text, size_t width, bool right) {
  const size_t fill = width > DisplayWidth(text) ? width - DisplayWidth(text) : 0;
  if (right) out.append(fill, ' ');
  out += text;
  if (!right) out.append(fill, ' ');
}

std::string RenderTable(const Rows& unsafe_rows, const std::vector<Column>& columns) {
  Rows rows = unsafe_rows;
  for (auto& row : rows) {
    for (std::string& cell : row) cell = TerminalText(cell);
  }
  std::vector<size_t> widths(columns.size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) {
      widths[c] = std::max(widths[c], DisplayWidth(row[c]));
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) {
      if (c > 0) line.append(columns[c].gap, ' ');
      Pad(line, row[c], widths[c], columns[c].right);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

std::string FormatNumber(double value) {
  if (!std::isfinite(value)) return "nan";
  const double magnitude = std::abs(value);
  if (magnitude == 0) return "0";
  if (magnitude < 99.95) {
    // Fixed decimals rather than %g, which would print 16.0 as "16".
    const int decimals = std::clamp(2 - static_cast<int>(std::floor(std::log10(magnitude))), 0, 9);
    return fmt::format("{:.{}f}", value, decimals);
  }
  if (magnitude < 99999.5) return fmt::format("{:.0f}", value);
  if (magnitude < 999.5e3) return fmt::format("{:.3g}k", value / 1e3);
  if (magnitude < 999.5e6) return fmt::format("{:.3g}M", value / 1e6);
  return fmt::format("{:.3g}G", value / 1e9);
}

std::string FormatRatio(double ratio) {
  if (ratio < 9.995) return fmt::format("{:.2f}", ratio);
  if (ratio < 99.95) return fmt::format("{:.1f}", ratio);
  return fmt::format("{:.0f}", ratio);
}

RowUnit UnitFor(std::string_view metric, double reference_seconds) {
  if (metric == "iops") return {"IOPS", 1};
  if (metric == "bandwidth_bytes") return {"MiB/s", 1.0 / (1024 * 1024)};
  if (!metric.ends_with("_seconds")) return {Humanize(metric), 1};
  const double r = std::abs(reference_seconds);
  if (r < 10e-3) return {Humanize(metric) + " µs", 1e6};
  if (r < 10) return {Humanize(metric) + " ms", 1e3};
  return {Humanize(metric) + " s", 1};
}

}  // namespace iowatch::daemon
