#include "collectors/cgroup/cgroup_io.h"

#include <fmt/format.h>

#include <algorithm>

#include "collectors/cgroup/cgroup_mounts.h"
#include "collectors/cgroup/cgroup_names.h"
#include "collectors/text/text_scan.h"

namespace iowatch::collectors {
namespace {

std::string Join(const std::string& root, const std::string& path, std::string_view file) {
  if (path.empty()) return fmt::format("{}/{}", root, file);
  return fmt::format("{}/{}/{}", root, path, file);
}

// Every cgroup below the root down to max_depth, sorted by path. A cgroup
// that vanishes mid-walk simply has no children.
std::vector<std::string> WalkCgroups(const FileTree& sysfs, const std::string& root,
                                     size_t max_depth) {
  std::vector<std::string> out;
  std::vector<std::string> level = {""};
  for (size_t depth = 1; depth <= max_depth && !level.empty(); ++depth) {
    std::vector<std::string> next;
    for (const std::string& parent : level) {
      const std::string dir = parent.empty() ? root : fmt::format("{}/{}", root, parent);
      for (const std::string& child :
           sysfs.ListDirectories(dir).value_or(std::vector<std::string>())) {
        next.push_back(parent.empty() ? child : fmt::format("{}/{}", parent, child));
      }
    }
    out.insert(out.end(), next.begin(), next.end());
    level = std::move(next);
  }
  std::ranges::sort(out);
  return out;
}

// A cgroup's counter files grow with the devices it touched: a line or six per device.
constexpr size_t kMaxCounterFileBytes = kMaxSysfsAttributeBytes * 16;

// The text of a cgroup file; "" when it does not exist (an empty counter
// file and a missing one mean the same: nothing counted).
Result<std::string> ReadCounterFile(const FileTree& sysfs, const std::string& relative) {
  auto text = sysfs.Read(relative, kMaxCounterFileBytes);
  if (!text && text.error().code == ErrorCode::kNotFound) return std::string();
  return text;
}

Result<std::vector<CgroupDeviceIo>> ReadV1(const FileTree& sysfs, const std::string& root,
                                           const std::string& path) {
  std::string names[2] = {"blkio.throttle.io_service_bytes_recursive",
                          "blkio.throttle.io_serviced_recursive"};
  // Read first, not stat()ed first: one system call less per cgroup and sample.
  auto bytes = sysfs.Read(Join(root, path, names[0]), kMaxCounterFileBytes);
  if (!bytes && bytes.error().code == ErrorCode::kNotFound) {
    names[0] = "blkio.throttle.io_service_bytes";  // kernels before 3.19 have no _recursive
    names[1] = "blkio.throttle.io_serviced";
    bytes = ReadCounterFile(sysfs, Join(root, path, names[0]));
  }
  if (!bytes) return ErrorOf(bytes);
  auto serviced = ReadCounterFile(sysfs, Join(root, path, names[1]));
  if (!serviced) return ErrorOf(serviced);
  return ParseBlkioThrottle(*bytes, sysfs.PathOf(Join(root, path, names[0])).string(), *serviced,
                            sysfs.PathOf(Join(root, path, names[1])).string());
}

Result<std::vector<CgroupDeviceIo>> ReadV2(const FileTree& sysfs, const std::string& root,
                                           const std::string& path) {
  const std::string file = Join(root, path, "io.stat");
  auto text = ReadCounterFile(sysfs, file);
  if (!text) return ErrorOf(text);
  return ParseIoStat(*text, sysfs.PathOf(file).string());
}

// v2 io.pressure, where the kernel has PSI; a malformed file is skipped and said.
void ReadPressureOf(const FileTree& sysfs, const std::string& relative, CgroupIo& cgroup,
                    std::vector<Error>& skipped) {
  auto text = sysfs.Read(relative);
  if (!text) return;
  auto parsed = ParsePressure(*text, sysfs.PathOf(relative).string());
  if (parsed) {
    cgroup.pressure = *parsed;
  } else {
    skipped.push_back(parsed.error());
  }
}

// Drops the devices past the cap, counting them.
void ApplyCap(size_t max_pairs, size_t& pairs, CgroupIo& cgroup, uint64_t& dropped) {
  const size_t room = max_pairs > pairs ? max_pairs - pairs : 0;
  if (cgroup.devices.size() > room) {
    dropped += cgroup.devices.size() - room;
    cgroup.devices.resize(room);
  }
  pairs += cgroup.devices.size();
}

}  // namespace

Result<CgroupLayout> DetectCgroupLayout(const FileTree& procfs, const FileTree& sysfs) {
  auto text = procfs.Read("self/mountinfo");
  if (!text) return ErrorOf(text);
  auto mounts = ParseCgroupMounts(*text, procfs.PathOf("self/mountinfo").string());
  if (!mounts) return ErrorOf(mounts);
  CgroupLayout layout;
  const auto unified = mounts->unified ? RelativeToSysfs(*mounts->unified) : std::nullopt;
  const auto blkio = mounts->blkio ? RelativeToSysfs(*mounts->blkio) : std::nullopt;
  layout.psi_root = unified;
  const std::string controllers =
      unified ? sysfs.Read(*unified + "/cgroup.controllers").value_or("") : "";
  const std::vector<std::string_view> listed = SplitFields(controllers);
  const bool v2_io = std::ranges::find(listed, std::string_view("io")) != listed.end();
  if (unified && v2_io) {
    layout.version = CgroupVersion::kV2;
    layout.io_root = *unified;
  } else if (blkio) {
    layout.version = CgroupVersion::kV1;
    layout.io_root = *blkio;
  } else {
    return MakeError(ErrorCode::kNotFound,
                     "no cgroup hierarchy counting block I/O is mounted under /sys (a cgroup2 "
                     "mount with the io controller, or cgroup v1 blkio)",
                     procfs.PathOf("self/mountinfo").string());
  }
  return layout;
}

std::string CgroupPathIn(std::string_view proc_cgroup, CgroupVersion version) {
  std::string found;
  ForEachLine(proc_cgroup, [&](std::string_view line, int) {
    const size_t first = line.find(':');
    const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) return;
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    bool wanted =
        version == CgroupVersion::kV2 && line.substr(0, first) == "0" && controllers.empty();
    for (size_t start = 0; version == CgroupVersion::kV1 && start <= controllers.size();) {
      const size_t comma = std::min(controllers.find(',', start), controllers.size());
      wanted = wanted || controllers.substr(start, comma - start) == "blkio";
      start = comma + 1;
    }
    if (!wanted) return;
    std::string_view path = line.substr(second + 1);
    while (path.starts_with('/')) path.remove_prefix(1);
    found = std::string(path);
  });
  return found;
}

std::string UnitCgroupPathIn(std::string_view proc_cgroup) {
  std::string unified, named;
  bool has_unified = false;
  ForEachLine(proc_cgroup, [&](std::string_view line, int) {
    if (line.starts_with("0::")) {
      has_unified = true;
      unified = std::string(line.substr(3));
    } else if (const size_t at = line.find(":name=systemd:"); at != std::string_view::npos) {
      named = std::string(line.substr(at + 14));
    }
  });
  std::string path = has_unified ? unified : named;
  if (!has_unified && named.empty()) return CgroupPathIn(proc_cgroup, CgroupVersion::kV1);
  while (path.starts_with('/')) path.erase(0, 1);
  return path;
}

std::string OwnCgroup(const FileTree& procfs, CgroupVersion version) {
  return CgroupPathIn(procfs.Read("self/cgroup").value_or(""), version);
}

CgroupIoScan ScanCgroupIo(const FileTree& sysfs, const CgroupLayout& layout,
                          const CgroupSelection& selection) {
  CgroupIoScan scan;
  size_t pairs = 0;
  for (const std::string& path : WalkCgroups(sysfs, layout.io_root, selection.max_depth)) {
    if (!selection.filter.Matches(path)) continue;
    auto devices = layout.version == CgroupVersion::kV2 ? ReadV2(sysfs, layout.io_root, path)
                                                        : ReadV1(sysfs, layout.io_root, path);
    if (!devices) {
      // Gone since the walk (a unit stopped): nothing to say. Otherwise skip it, say why.
      if (devices.error().code != ErrorCode::kNotFound) scan.skipped.push_back(devices.error());
      continue;
    }
    if (selection.device_wanted) {
      std::erase_if(*devices, [&](const CgroupDeviceIo& io) {
        return !selection.device_wanted(io.major, io.minor);
      });
    }
    CgroupIo cgroup{path, UnitOf(path), std::move(*devices), std::nullopt};
    if (layout.psi_root)
      ReadPressureOf(sysfs, Join(*layout.psi_root, path, "io.pressure"), cgroup, scan.skipped);
    ApplyCap(selection.max_pairs, pairs, cgroup, scan.dropped_pairs);
    scan.cgroups.push_back(std::move(cgroup));
  }
  return scan;
}

}  // namespace iowatch::collectors
