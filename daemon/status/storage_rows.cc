#include "daemon/status/storage_rows.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <vector>

#include "common/markup.h"

namespace iowatch::daemon {
namespace {

// `items` with those that have problems first, each group in its order.
template <typename T>
std::vector<const T*> ProblemsFirst(std::vector<const T*> items) {
  std::ranges::stable_partition(items, [](const T* t) { return !t->problems.empty(); });
  return items;
}

std::string NvmeRow(const NvmeControllerHealth& c) {
  const std::string state = c.state.empty() ? "unknown" : c.state;
  return fmt::format(
      "<tr><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td{}>{}</td></tr>\n",
      HtmlEscape(c.name), c.problems.empty() ? "good" : "bad", HtmlEscape(state),
      HtmlEscape(c.model), HtmlEscape(c.firmware), c.namespaces.empty() ? " class=\"dim\"" : "",
      c.namespaces.empty() ? "none" : HtmlEscape(fmt::format("{}", fmt::join(c.namespaces, ", "))));
}

std::string NvmeSection(const HostHealth& health) {
  // A controller is on each of its namespaces' stories: one row each.
  std::set<std::string> seen;
  std::vector<const NvmeControllerHealth*> controllers;
  for (const DiskHealth& d : health.disks) {
    if (d.nvme && seen.insert(d.nvme->name).second) controllers.push_back(&*d.nvme);
  }
  if (controllers.empty()) return {};
  std::ranges::sort(controllers, {}, &NvmeControllerHealth::name);
  std::string rows;
  for (const NvmeControllerHealth* c : ProblemsFirst(controllers)) rows += NvmeRow(*c);
  return "<h2>NVMe controllers</h2>\n<table id=\"nvme\"><tr><th>controller</th><th>state</th>"
         "<th>model</th><th>firmware</th><th>namespaces</th></tr>\n" +
         rows + "</table>\n";
}

std::string ZfsSection(const HostHealth& health) {
  std::vector<const ZfsPoolHealth*> pools;
  pools.reserve(health.zfs_pools.size());
  for (const ZfsPoolHealth& p : health.zfs_pools) pools.push_back(&p);
  if (pools.empty()) return {};
  std::string rows;
  for (const ZfsPoolHealth* p : ProblemsFirst(pools)) {
    rows += fmt::format("<tr><td>{}</td><td class=\"{}\">{}</td></tr>\n", HtmlEscape(p->name),
                        p->problems.empty() ? "good" : "bad",
                        HtmlEscape(p->state.empty() ? "unknown" : p->state));
  }
  return "<h2>ZFS pools</h2>\n<table id=\"zfs\"><tr><th>pool</th><th>state</th></tr>\n" + rows +
         "</table>\n";
}

std::string MultipathRow(const MultipathHealth& m) {
  std::string paths;
  for (const MultipathPathHealth& p : m.paths) {
    const bool usable = p.state == "running";
    paths += fmt::format("{}<span class=\"{}\">{} {}</span>", paths.empty() ? "" : ", ",
                         usable ? "good" : "bad", HtmlEscape(p.name), HtmlEscape(p.state));
  }
  const bool marked = !m.problems.empty() || !m.warnings.empty();
  return fmt::format("<tr><td>{}</td><td>{}</td><td class=\"{}\">{} of {}</td><td{}>{}</td></tr>\n",
                     HtmlEscape(m.name), HtmlEscape(m.device), marked ? "bad" : "good", m.usable,
                     m.paths.size(), paths.empty() ? " class=\"dim\"" : "",
                     paths.empty() ? "none" : paths);
}

std::string MultipathSection(const HostHealth& health) {
  std::vector<const MultipathHealth*> maps;
  for (const DiskHealth& d : health.disks) {
    if (d.multipath) maps.push_back(&*d.multipath);
  }
  if (maps.empty()) return {};
  // Problems first, then maps down to one usable path, then the rest.
  std::ranges::stable_partition(maps,
                                [](const MultipathHealth* m) { return !m->warnings.empty(); });
  std::string rows;
  for (const MultipathHealth* m : ProblemsFirst(maps)) rows += MultipathRow(*m);
  return "<h2>Multipath maps</h2>\n<table id=\"multipath\"><tr><th>map</th><th>device</th>"
         "<th>usable paths</th><th>paths</th></tr>\n" +
         rows + "</table>\n";
}

}  // namespace

std::string StorageStackSections(const HostHealth& health) {
  return NvmeSection(health) + ZfsSection(health) + MultipathSection(health);
}

}  // namespace iowatch::daemon
