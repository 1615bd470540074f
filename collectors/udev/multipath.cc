#include "collectors/udev/multipath.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/utf8.h"

namespace iowatch::collectors {
namespace {

// The state becomes a label value: trimmed, valid UTF-8, no control characters.
std::string PathStateLabel(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\n");
  if (first == std::string_view::npos) return "unknown";
  text = text.substr(first, text.find_last_not_of(" \t\n") - first + 1);
  std::string state = ToValidUtf8(text);
  while (const std::optional<size_t> control = ControlCharacterAt(state)) state[*control] = ' ';
  return state;
}

Result<MultipathPath> ReadMultipathPath(const FileTree& sysfs, const std::string& name) {
  const auto state =
      sysfs.Read(fmt::format("block/{}/device/state", name), kMaxSysfsAttributeBytes);
  if (!state && state.error().code == ErrorCode::kNotFound) return MultipathPath{name, "unknown"};
  if (!state) return ErrorOf(state);
  return MultipathPath{name, PathStateLabel(*state)};
}

}  // namespace

bool IsMultipathUuid(std::string_view dm_uuid) { return dm_uuid.starts_with("mpath-"); }

Result<MultipathMap> ReadMultipathMap(const FileTree& sysfs, std::string_view device,
                                      std::string_view name) {
  auto slaves = sysfs.List(fmt::format("block/{}/slaves", device));
  if (!slaves) return ErrorOf(slaves);
  std::ranges::sort(*slaves);
  MultipathMap map{.device = std::string(device), .name = std::string(name), .paths = {}};
  for (const std::string& slave : *slaves) {
    auto path = ReadMultipathPath(sysfs, slave);
    if (!path) return ErrorOf(path);
    map.paths.push_back(std::move(*path));
  }
  return map;
}

}  // namespace iowatch::collectors
