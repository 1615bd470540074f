#include "daemon/status/md_rows.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/markup.h"

namespace iowatch::daemon {
namespace {

std::string MdRow(const MdArrayHealth& a) {
  const bool stopped = !a.active && !a.container;
  std::string state = a.active ? "active" : "inactive";
  if (!a.array_state.empty() && a.array_state != state) state += " (" + a.array_state + ")";
  const std::string degraded =
      a.degraded > 0 ? fmt::format("<td class=\"bad\">{} of {}</td>", a.degraded, a.raid_disks)
                     : "<td class=\"good\">0</td>";
  const std::string failed =
      a.failed.empty() ? "<td class=\"dim\">none</td>"
                       : "<td class=\"bad\">" +
                             HtmlEscape(fmt::format("{}", fmt::join(a.failed, ", "))) + "</td>";
  const std::string sync = DescribeMdSync(a);
  return fmt::format("<tr><td>{}</td><td>{}</td><td class=\"{}\">{}</td>{}{}<td{}>{}</td></tr>\n",
                     HtmlEscape(a.name), HtmlEscape(a.level), stopped ? "bad" : "good",
                     HtmlEscape(state), degraded, failed, sync.empty() ? " class=\"dim\"" : "",
                     sync.empty() ? "none" : HtmlEscape(sync));
}

}  // namespace

std::string MdSection(const HostHealth& health) {
  std::string rows;
  for (const DiskHealth& d : health.disks) {
    if (d.md) rows += MdRow(*d.md);
  }
  if (rows.empty()) return {};
  return "<h2>RAID arrays (md)</h2>\n<table id=\"md\"><tr><th>array</th><th>level</th>"
         "<th>state</th><th>degraded</th><th>failed members</th><th>sync</th></tr>\n" +
         rows + "</table>\n";
}

}  // namespace iowatch::daemon
