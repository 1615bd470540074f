// `iowatch health`'s two outputs: a screen per host (names through
// TerminalText: they come from the system) and JSON.
#include "cli/health/health_format.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iterator>
#include <nlohmann/json.hpp>

#include "common/terminal_text.h"

namespace iowatch::daemon {
namespace {

std::string Percent(const std::optional<double>& p) {
  return p ? fmt::format("{:.0f} %", *p) : "-";
}

void AppendIdentity(std::string& out, const DiskHealth& d) {
  fmt::format_to(std::back_inserter(out), "{}  {:.1f} GB", TerminalText(d.name),
                 static_cast<double>(d.size_bytes) / 1e9);
  for (const std::string* field : {&d.transport, &d.model, &d.serial}) {
    if (!field->empty()) out += "  " + TerminalText(*field);
  }
  out += "\n";
}

void AppendSmart(std::string& out, const SmartHealth& s) {
  fmt::format_to(std::back_inserter(out), "  SMART        {}", s.state);
  if (!s.detail.empty()) out += ": " + TerminalText(s.detail);
  out += "\n";
  for (const auto& [label, value] : s.facts) {
    fmt::format_to(std::back_inserter(out), "    {:<22} {}\n", label, value);
  }
}

// An md array's lines: its level and state, its members, a sync and its progress.
void AppendMd(std::string& out, const MdArrayHealth& a) {
  fmt::format_to(std::back_inserter(out), "  md array     {}{}\n",
                 a.level.empty() ? "" : TerminalText(a.level) + ", ",
                 TerminalText(DescribeMdState(a)));
  if (!a.members.empty()) {
    out += "  members      " + TerminalText(fmt::format("{}", fmt::join(a.members, ", "))) + "\n";
  }
  const std::string sync = DescribeMdSync(a);
  if (!sync.empty()) out += "  sync         " + sync + "\n";
}

nlohmann::json MdJson(const MdArrayHealth& a) {
  nlohmann::json sync = nullptr;
  if (a.sync) {
    sync = {{"action", a.sync->action},
            {"done_ratio", a.sync->done_ratio},
            {"remaining_seconds", a.sync->remaining_seconds},
            {"speed_bytes_per_second", a.sync->speed_bytes_per_second}};
  }
  return {{"level", a.level},           {"active", a.active},     {"array_state", a.array_state},
          {"raid_disks", a.raid_disks}, {"degraded", a.degraded}, {"members", a.members},
          {"failed", a.failed},         {"sync", sync},           {"sync_waiting", a.sync_waiting}};
}

// A thin pool's lines: its mode and fill, then what is worth a look.
void AppendThinPool(std::string& out, const ThinPoolHealth& p) {
  out += "  thin pool    " + TerminalText(p.pool) + ": " + TerminalText(DescribeThinPool(p)) + "\n";
  for (const std::string& w : p.warnings) out += "  WARNING      " + TerminalText(w) + "\n";
}

nlohmann::json ThinPoolJson(const ThinPoolHealth& p) {
  const auto optional = [](const auto& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"pool", p.pool},
          {"device", p.device},
          {"mode", p.mode},
          {"data_bytes", optional(p.data_bytes)},
          {"data_used_percent", optional(p.data_used_percent)},
          {"metadata_bytes", optional(p.metadata_bytes)},
          {"metadata_used_percent", optional(p.metadata_used_percent)},
          {"needs_check", p.needs_check},
          {"error_if_no_space", p.error_if_no_space},
          {"warnings", p.warnings}};
}

void AppendNvme(std::string& out, const NvmeControllerHealth& c) {
  out += "  controller   " + TerminalText(c.name) + ": " + TerminalText(DescribeNvmeController(c)) +
         "\n";
}

nlohmann::json NvmeJson(const NvmeControllerHealth& c) {
  return {{"controller", c.name},   {"model", c.model}, {"serial", c.serial},
          {"firmware", c.firmware}, {"state", c.state}, {"namespaces", c.namespaces}};
}

// A multipath map's lines: its paths and their states, then what is worth a look.
void AppendMultipath(std::string& out, const MultipathHealth& m) {
  out +=
      "  multipath    " + TerminalText(m.name) + ": " + TerminalText(DescribeMultipath(m)) + "\n";
  for (const std::string& w : m.warnings) out += "  WARNING      " + TerminalText(w) + "\n";
}

nlohmann::json MultipathJson(const MultipathHealth& m) {
  nlohmann::json paths = nlohmann::json::array();
  for (const MultipathPathHealth& p : m.paths) {
    paths.push_back({{"path", p.name}, {"state", p.state}});
  }
  return {{"name", m.name},
          {"device", m.device},
          {"paths", paths},
          {"usable_paths", m.usable},
          {"warnings", m.warnings}};
}

// A ZFS pool's story: its state and problems.
void AppendZfsPool(std::string& out, const ZfsPoolHealth& p) {
  out += TerminalText(p.name) + "  zfs pool\n";
  out += "  state        " + (p.state.empty() ? "unknown" : TerminalText(p.state)) + "\n";
  if (p.problems.empty()) out += "  problems     none\n";
  for (const std::string& problem : p.problems) {
    out += "  PROBLEM      " + TerminalText(problem) + "\n";
  }
  out += "\n";
}

nlohmann::json ZfsPoolJson(const ZfsPoolHealth& p) {
  return {{"pool", p.name},
          {"state", p.state.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.state)},
          {"problems", p.problems}};
}

void AppendErrors(std::string& out, const DiskHealth& d) {
  if (d.io_errors.empty()) {
    out += "  I/O errors   none in the kernel log since boot\n";
    return;
  }
  out += "  I/O errors   since boot (kernel log)\n";
  for (const IoErrorSeries& e : d.io_errors) {
    fmt::format_to(std::back_inserter(out), "    {:<22} {} {} {}\n", TerminalText(e.device),
                   e.count, e.buffer ? "buffer I/O errors on" : e.error + " errors on",
                   TerminalText(e.op));
  }
}

void AppendFilesystems(std::string& out, const DiskHealth& d) {
  if (d.filesystems.empty()) return;
  out += "  filesystems  mount point                     type    used  inodes  state\n";
  for (const FilesystemHealth& f : d.filesystems) {
    std::string state = f.unreadable ? "unreadable" : f.readonly ? "ro" : "rw";
    if (f.errors > 0) state += fmt::format(", {} errors", f.errors);
    fmt::format_to(std::back_inserter(out), "    {:<42} {:<7} {:>5} {:>7}  {}\n",
                   TerminalText(f.mount_point), TerminalText(f.fstype), Percent(f.used_percent),
                   Percent(f.inodes_used_percent), state);
  }
}

void AppendProbes(std::string& out, const DiskHealth& d) {
  for (const ProbeSeriesVerdict& p : d.probes) {
    fmt::format_to(std::back_inserter(out), "  probe        {}: {}\n", TerminalText(p.job),
                   p.regressed ? "regressed" : "no regression");
  }
}

void AppendPassive(std::string& out, const DiskHealth& d) {
  for (const PassiveSeriesVerdict& v : d.passive) {
    out += "  passive      " + TerminalText(DescribePassive(v)) + "\n";
  }
}

nlohmann::json FilesystemJson(const FilesystemHealth& f) {
  const auto optional = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"mountpoint", f.mount_point},
          {"device", f.device},
          {"fstype", f.fstype},
          {"used_percent", optional(f.used_percent)},
          {"inodes_used_percent", optional(f.inodes_used_percent)},
          {"readonly", f.readonly},
          {"unreadable", f.unreadable},
          {"errors", f.errors}};
}

nlohmann::json DiskJson(const DiskHealth& d) {
  nlohmann::json smart = {{"state", d.smart.state}, {"detail", d.smart.detail}};
  for (const auto& [label, value] : d.smart.facts) smart["facts"][label] = value;
  nlohmann::json errors = nlohmann::json::array();
  for (const IoErrorSeries& e : d.io_errors) {
    errors.push_back({{"device", e.device},
                      {"op", e.op},
                      {"error", e.error},
                      {"buffer", e.buffer},
                      {"count", e.count}});
  }
  nlohmann::json filesystems = nlohmann::json::array();
  for (const FilesystemHealth& f : d.filesystems) filesystems.push_back(FilesystemJson(f));
  nlohmann::json probes = nlohmann::json::array();
  for (const ProbeSeriesVerdict& p : d.probes) {
    probes.push_back({{"job", p.job}, {"regressed", p.regressed}});
  }
  nlohmann::json passive = nlohmann::json::array();
  for (const PassiveSeriesVerdict& v : d.passive) {
    passive.push_back({{"op", v.op},
                       {"size", v.size},
                       {"source", v.source},
                       {"regressed", v.regressed},
                       {"since_unix_ms", v.since_unix_ms},
                       {"latency_ratio", v.ratio > 0 ? nlohmann::json(v.ratio) : nullptr}});
  }
  nlohmann::json md = d.md ? MdJson(*d.md) : nlohmann::json(nullptr);
  nlohmann::json thin_pool = d.thin_pool ? ThinPoolJson(*d.thin_pool) : nlohmann::json(nullptr);
  nlohmann::json nvme = d.nvme ? NvmeJson(*d.nvme) : nlohmann::json(nullptr);
  nlohmann::json multipath = d.multipath ? MultipathJson(*d.multipath) : nlohmann::json(nullptr);
  return {{"device", d.name},
          {"model", d.model},
          {"serial", d.serial},
          {"transport", d.transport},
          {"size_bytes", d.size_bytes},
          {"smart", smart},
          {"io_errors", errors},
          {"filesystems", filesystems},
          {"probes", probes},
          {"passive", passive},
          {"md", md},
          {"thin_pool", thin_pool},
          {"nvme_controller", nvme},
          {"multipath", multipath},
          {"problems", d.problems}};
}

}  // namespace

std::string FormatHealthText(const HostHealth& health) {
  std::string out;
  for (const DiskHealth& d : health.disks) {
    AppendIdentity(out, d);
    AppendSmart(out, d.smart);
    if (d.md) AppendMd(out, *d.md);
    if (d.thin_pool) AppendThinPool(out, *d.thin_pool);
    if (d.nvme) AppendNvme(out, *d.nvme);
    if (d.multipath) AppendMultipath(out, *d.multipath);
    AppendErrors(out, d);
    AppendFilesystems(out, d);
    AppendProbes(out, d);
    AppendPassive(out, d);
    if (d.problems.empty()) {
      out += "  problems     none\n";
    } else {
      for (const std::string& p : d.problems) out += "  PROBLEM      " + TerminalText(p) + "\n";
    }
    out += "\n";
  }
  for (const ZfsPoolHealth& p : health.zfs_pools) AppendZfsPool(out, p);
  for (const std::string& note : health.notes) out += "note: " + TerminalText(note) + "\n";
  fmt::format_to(std::back_inserter(out), "{} disk(s), ", health.disks.size());
  if (!health.zfs_pools.empty()) {
    fmt::format_to(std::back_inserter(out), "{} ZFS pool(s), ", health.zfs_pools.size());
  }
  fmt::format_to(std::back_inserter(out), "{} problem(s)\n", health.Problems());
  return out;
}

std::string FormatHealthJson(const HostHealth& health) {
  nlohmann::json disks = nlohmann::json::array();
  for (const DiskHealth& d : health.disks) disks.push_back(DiskJson(d));
  nlohmann::json pools = nlohmann::json::array();
  for (const ZfsPoolHealth& p : health.zfs_pools) pools.push_back(ZfsPoolJson(p));
  const nlohmann::json doc = {{"disks", disks},
                              {"zfs_pools", pools},
                              {"notes", health.notes},
                              {"problems", health.Problems()}};
  // Names are the system's bytes: invalid UTF-8 is replaced, never an exception.
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace iowatch::daemon
