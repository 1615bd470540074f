// Text layout for the tables of `iowatch baseline` (baseline_table.h): widths
// in terminal columns rather than bytes ("µ" and "±" are two bytes in UTF-8),
// columns aligned left or right, and numbers as the tables print them.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace iowatch::daemon {

// Columns `text` takes on a terminal: UTF-8 code points, each one column.
size_t DisplayWidth(std::string_view text);
// Appends `text` padded with spaces to `width` columns, on the left if `right`.
void Pad(std::string& out, std::string_view text, size_t width, bool right);

// Rows of cells (the first rows may be headers), each column left- or
// right-aligned and `gap` spaces after the previous one; no trailing spaces.
// Every cell passes through TerminalText (common/terminal_text.h): text
// from the store (job names, models, fingerprints) cannot move the cursor,
// clear the screen or forge a line.
using Rows = std::vector<std::vector<std::string>>;
struct Column {
  bool right = false;
  size_t gap = 2;
};
std::string RenderTable(const Rows& rows, const std::vector<Column>& columns);

// Three significant digits below 100 ("18.1", "16.0", "0.181"), whole numbers
// up to 99999 ("12873": operators think of IOPS that way), then k/M/G ("129k").
std::string FormatNumber(double value);
// "0.98", "12.5", "250".
std::string FormatRatio(double ratio);

// How one (op, metric) row is shown: its label and the factor from the
// store's base units. IOPS, MiB/s (bandwidth_bytes), and latencies
// ("clat_p99_9_seconds" -> "clat p99.9 µs") in µs unless the reference (the
// baseline median, or a run's value) is 10 ms or more, so a slow disk does not
// read "12345 µs"; ms up to 10 s, then s. Other metrics as named, unscaled.
struct RowUnit {
  std::string label;
  double scale = 1;
};
RowUnit UnitFor(std::string_view metric, double reference_seconds);

}  // namespace iowatch::daemon
