#include "daemon/status/thin_pool_rows.h"

#include <fmt/format.h>

#include <optional>

#include "common/markup.h"

namespace iowatch::daemon {
namespace {

// "38 % of 66.3 GB", marked at kThinPoolWarnPercent; "-" where unknown.
std::string UsedCell(const std::optional<double>& percent, const std::optional<uint64_t>& bytes) {
  if (!percent || !bytes) return "<td class=\"dim\">-</td>";
  return fmt::format("<td class=\"{}\">{:.0f} % of {}</td>",
                     *percent >= kThinPoolWarnPercent ? "bad" : "good", *percent,
                     ThinPoolSizeText(*bytes));
}

std::string ThinPoolRow(const ThinPoolHealth& p) {
  std::string flags;
  if (p.needs_check) flags = "<span class=\"bad\">needs_check</span>";
  if (p.error_if_no_space) flags += std::string(flags.empty() ? "" : ", ") + "error_if_no_space";
  return fmt::format("<tr><td>{}</td><td>{}</td><td class=\"{}\">{}</td>{}{}<td{}>{}</td></tr>\n",
                     HtmlEscape(p.pool), p.device.empty() ? "-" : HtmlEscape(p.device),
                     p.mode == "rw" ? "good" : "bad", HtmlEscape(p.mode),
                     UsedCell(p.data_used_percent, p.data_bytes),
                     UsedCell(p.metadata_used_percent, p.metadata_bytes),
                     flags.empty() ? " class=\"dim\"" : "", flags.empty() ? "none" : flags);
}

}  // namespace

std::string ThinPoolSection(const HostHealth& health) {
  std::string rows;
  for (const DiskHealth& d : health.disks) {
    if (d.thin_pool) rows += ThinPoolRow(*d.thin_pool);
  }
  if (rows.empty()) return {};
  return "<h2>Thin pools (LVM)</h2>\n<table id=\"thin_pools\"><tr><th>pool</th><th>device</th>"
         "<th>mode</th><th>data used</th><th>metadata used</th><th>flags</th></tr>\n" +
         rows + "</table>\n";
}

}  // namespace iowatch::daemon
