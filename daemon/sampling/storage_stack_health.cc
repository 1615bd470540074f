#include "daemon/sampling/storage_stack_health.h"

#include <fmt/format.h>

#include <string_view>

namespace iowatch::daemon {
namespace {

// Why a controller in `state` matters (nvme_sysfs_show_state's names).
std::string_view NvmeStateMeaning(std::string_view state) {
  if (state == "resetting" || state == "connecting") return "no I/O until it is live again";
  if (state == "dead") return "the driver gave it up after a failed reset: no I/O";
  if (state == "deleting" || state == "deleting (no IO)") return "being removed: no I/O";
  if (state == "new") return "not yet initialised: no I/O";
  return "not live: no I/O";
}

NvmeControllerHealth HealthOf(const collectors::NvmeController& c) {
  NvmeControllerHealth h{.name = c.name,
                         .model = c.model.value_or(""),
                         .serial = c.serial.value_or(""),
                         .firmware = c.firmware_rev.value_or(""),
                         .state = c.state.value_or(""),
                         .namespaces = {},
                         .problems = {}};
  for (const collectors::NvmeNamespace& ns : c.namespaces) h.namespaces.push_back(ns.name);
  // No state file (a kernel too old to print it) is not judged.
  if (!h.state.empty() && h.state != "live") {
    h.problems.push_back(
        fmt::format("NVMe controller {} {}: {}", h.name, h.state, NvmeStateMeaning(h.state)));
  }
  return h;
}

// Why a pool in `state` matters (spa_state_to_name's names; zpoolconcepts(7)).
std::string_view ZfsStateMeaning(std::string_view state) {
  if (state == "DEGRADED") return "a device failed or is missing, its redundancy is reduced";
  if (state == "FAULTED") return "its data cannot be read: too many devices failed";
  if (state == "SUSPENDED") return "I/O suspended after device failures (zpool clear)";
  if (state == "UNAVAIL" || state == "REMOVED") return "its devices cannot be opened";
  if (state == "OFFLINE") return "taken offline";
  return "not ONLINE";
}

ZfsPoolHealth HealthOf(const collectors::ZfsPool& p) {
  ZfsPoolHealth h{.name = p.name, .state = p.state.value_or(""), .problems = {}};
  if (!h.state.empty() && h.state != "ONLINE") {
    h.problems.push_back(
        fmt::format("ZFS pool {} {}: {}", h.name, h.state, ZfsStateMeaning(h.state)));
  }
  return h;
}

MultipathHealth HealthOf(const collectors::MultipathMap& m) {
  MultipathHealth h{
      .device = m.device, .name = m.name, .paths = {}, .usable = 0, .warnings = {}, .problems = {}};
  for (const collectors::MultipathPath& p : m.paths) {
    h.paths.push_back({p.name, p.state});
    if (p.state == "running") {
      ++h.usable;
      continue;
    }
    h.problems.push_back(
        fmt::format("multipath {}: path {} {}: it carries no I/O", h.name, p.name, p.state));
  }
  if (h.usable == 0 && !h.paths.empty()) {
    h.problems.push_back(
        fmt::format("multipath {}: no usable path: its I/O queues or fails", h.name));
  } else if (h.usable == 1) {
    h.warnings.push_back(
        fmt::format("multipath {}: down to one usable path of {}: one more failure stops its I/O",
                    h.name, h.paths.size()));
  }
  return h;
}

template <typename Out, typename In>
std::vector<Out> HealthOfEach(const std::vector<In>& in) {
  std::vector<Out> out;
  out.reserve(in.size());
  for (const In& item : in) out.push_back(HealthOf(item));
  return out;
}

}  // namespace

std::vector<NvmeControllerHealth> BuildNvmeHealth(const Snapshot& s) {
  return HealthOfEach<NvmeControllerHealth>(s.nvme.controllers);
}

std::vector<ZfsPoolHealth> BuildZfsHealth(const Snapshot& s) {
  return HealthOfEach<ZfsPoolHealth>(s.zfs.pools);
}

std::vector<MultipathHealth> BuildMultipathHealth(const Snapshot& s) {
  return HealthOfEach<MultipathHealth>(s.udev.multipath);
}

std::string DescribeNvmeController(const NvmeControllerHealth& c) {
  std::string out = c.model.empty() ? "model unknown" : c.model;
  if (!c.firmware.empty()) out += ", firmware " + c.firmware;
  return out + ", " + (c.state.empty() ? "state unknown" : c.state);
}

std::string DescribeMultipath(const MultipathHealth& m) {
  std::string out = fmt::format("{} of {} path(s) usable", m.usable, m.paths.size());
  const char* separator = ": ";
  for (const MultipathPathHealth& p : m.paths) {
    out += separator + p.name + " " + p.state;
    separator = ", ";
  }
  return out;
}

}  // namespace iowatch::daemon
