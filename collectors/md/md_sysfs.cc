#include "collectors/md/md_sysfs.h"

#include <fmt/format.h>

#include <algorithm>

#include "collectors/text/sysfs_text.h"
#include "collectors/text/text_scan.h"

namespace iowatch::collectors {
namespace {

std::string MdSysfsPath(std::string_view md_dir, std::string_view name) {
  return fmt::format("{}/{}", md_dir, name);
}

std::unexpected<Error> MdSysfsParseError(const FileTree& sysfs, const std::string& relative,
                                         std::string_view expected, std::string_view found) {
  return std::unexpected(Error::Parse(fmt::format("expected {}, found '{}'", expected, found),
                                      sysfs.PathOf(relative).string(), 0));
}

// "4" or "5 (4)": md.c's raid_disks_show during a reshape.
std::optional<MdRaidDisks> ParseMdRaidDisks(std::string_view text) {
  const size_t space = text.find(' ');
  const auto count = ParseU64(text.substr(0, space));
  if (!count) return std::nullopt;
  if (space == std::string_view::npos) return MdRaidDisks{.count = *count};
  const std::string_view rest = TrimSysfsText(text.substr(space));
  if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') return std::nullopt;
  const auto before = ParseU64(rest.substr(1, rest.size() - 2));
  if (!before) return std::nullopt;
  return MdRaidDisks{.count = *count, .before_reshape = before};
}

// "none", "delayed" or "<done> / <total>" (md.c's sync_completed_show).
std::optional<MdSyncCompleted> ParseMdSyncCompleted(std::string_view text) {
  using Kind = MdSyncCompleted::Kind;
  if (text == "none") return MdSyncCompleted{.kind = Kind::kNone};
  if (text == "delayed") return MdSyncCompleted{.kind = Kind::kDelayed};
  const std::vector<std::string_view> fields = SplitFields(text);
  if (fields.size() != 3 || fields[1] != "/") return std::nullopt;
  const auto done = ParseU64(fields[0]);
  const auto total = ParseU64(fields[2]);
  if (!done || !total) return std::nullopt;
  return MdSyncCompleted{.kind = Kind::kRunning, .done_sectors = *done, .total_sectors = *total};
}

Result<std::optional<MdSyncCompleted>> ReadMdSyncCompleted(const FileTree& sysfs,
                                                           std::string_view md_dir) {
  const auto text = ReadMdSysfsText(sysfs, md_dir, "sync_completed");
  if (!text) return ErrorOf(text);
  if (!*text) return std::nullopt;
  const auto parsed = ParseMdSyncCompleted(**text);
  if (!parsed) {
    return MdSysfsParseError(sysfs, MdSysfsPath(md_dir, "sync_completed"),
                             "'none', 'delayed' or '<done> / <total>' sectors", **text);
  }
  return parsed;
}

// sync_speed is "none" while no sync runs.
Result<std::optional<uint64_t>> ReadMdSyncSpeed(const FileTree& sysfs, std::string_view md_dir) {
  const auto text = ReadMdSysfsText(sysfs, md_dir, "sync_speed");
  if (!text) return ErrorOf(text);
  if (!*text || **text == "none") return std::nullopt;
  const auto speed = ParseU64(**text);
  if (!speed) {
    return MdSysfsParseError(sysfs, MdSysfsPath(md_dir, "sync_speed"), "'none' or K/sec", **text);
  }
  return speed;
}

std::vector<std::string> MdSysfsFlags(std::string_view text) {
  std::vector<std::string> flags;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view flag = TrimSysfsText(text.substr(0, comma));
    if (!flag.empty()) flags.emplace_back(flag);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return flags;
}

Result<MdSysfsMember> ReadMdSysfsMember(const FileTree& sysfs, std::string_view md_dir,
                                        std::string_view entry) {
  const std::string dir = MdSysfsPath(md_dir, entry);
  MdSysfsMember member{.name = std::string(entry.substr(4))};  // past "dev-"
  const auto state = ReadMdSysfsText(sysfs, dir, "state");
  if (!state) return ErrorOf(state);
  if (*state) member.state = MdSysfsFlags(**state);
  const auto errors = ReadMdSysfsNumber(sysfs, dir, "errors");
  if (!errors) return ErrorOf(errors);
  member.errors = *errors;
  return member;
}

Result<std::vector<MdSysfsMember>> ReadMdSysfsMembers(const FileTree& sysfs,
                                                      std::string_view md_dir) {
  auto entries = sysfs.List(md_dir);
  if (!entries) return ErrorOf(entries);
  std::ranges::sort(*entries);
  std::vector<MdSysfsMember> members;
  for (const std::string& entry : *entries) {
    if (!entry.starts_with("dev-")) continue;
    auto member = ReadMdSysfsMember(sysfs, md_dir, entry);
    if (!member) return ErrorOf(member);
    members.push_back(std::move(*member));
  }
  return members;
}

bool IsMdContainerLevel(std::string_view level) {
  return level == "container" || level == "imsm" || level == "ddf";
}

// The levels procfs reads degraded (and sync_action, sync_completed) for.
bool IsMdRedundantLevel(std::string_view level) {
  return level == "raid1" || level == "raid4" || level == "raid5" || level == "raid6" ||
         level == "raid10";
}

}  // namespace

bool MdSysfsMember::Has(std::string_view flag) const {
  return state && std::ranges::find(*state, flag) != state->end();
}

Result<std::optional<std::string>> ReadMdSysfsText(const FileTree& sysfs, std::string_view md_dir,
                                                   std::string_view name) {
  return ReadSysfsText(sysfs, MdSysfsPath(md_dir, name));
}

Result<std::optional<uint64_t>> ReadMdSysfsNumber(const FileTree& sysfs, std::string_view md_dir,
                                                  std::string_view name) {
  const auto text = ReadMdSysfsText(sysfs, md_dir, name);
  if (!text) return ErrorOf(text);
  if (!*text) return std::nullopt;
  const auto number = ParseU64(**text);
  if (!number) {
    return MdSysfsParseError(sysfs, MdSysfsPath(md_dir, name), "a decimal number", **text);
  }
  return number;
}

Result<std::optional<MdRaidDisks>> ReadMdRaidDisks(const FileTree& sysfs, std::string_view md_dir) {
  const auto text = ReadMdSysfsText(sysfs, md_dir, "raid_disks");
  if (!text) return ErrorOf(text);
  if (!*text || (*text)->empty()) return std::nullopt;
  const auto disks = ParseMdRaidDisks(**text);
  if (!disks) {
    return MdSysfsParseError(sysfs, MdSysfsPath(md_dir, "raid_disks"),
                             "'<disks>' or '<disks> (<disks before the reshape>)'", **text);
  }
  return disks;
}

Result<MdSysfsArray> ReadMdSysfsArray(const FileTree& sysfs, std::string_view name) {
  const std::string md = fmt::format("block/{}/md", name);
  MdSysfsArray array{.name = std::string(name)};
  std::optional<Error> error;
  const bool read =
      TakeSysfsRead(ReadMdSysfsText(sysfs, md, "array_state"), array.array_state, error) &&
      TakeSysfsRead(ReadMdSysfsText(sysfs, md, "level"), array.level, error) &&
      TakeSysfsRead(ReadMdRaidDisks(sysfs, md), array.raid_disks, error) &&
      TakeSysfsRead(ReadMdSysfsNumber(sysfs, md, "degraded"), array.degraded, error) &&
      TakeSysfsRead(ReadMdSysfsText(sysfs, md, "sync_action"), array.sync_action, error) &&
      TakeSysfsRead(ReadMdSyncCompleted(sysfs, md), array.sync_completed, error) &&
      TakeSysfsRead(ReadMdSyncSpeed(sysfs, md), array.sync_speed_kib_per_s, error) &&
      TakeSysfsRead(ReadMdSysfsNumber(sysfs, md, "mismatch_cnt"), array.mismatch_cnt, error) &&
      TakeSysfsRead(ReadMdSysfsNumber(sysfs, md, "chunk_size"), array.chunk_size_bytes, error) &&
      TakeSysfsRead(ReadMdSysfsNumber(sysfs, md, "layout"), array.layout, error) &&
      TakeSysfsRead(ReadMdSysfsMembers(sysfs, md), array.members, error);
  if (!read) return std::unexpected(*error);
  return array;
}

Result<std::vector<MdSysfsArray>> ReadMdSysfsArrays(const FileTree& sysfs) {
  auto names = sysfs.List("block");
  if (!names) return ErrorOf(names);
  // Only md* can be an array: a host's thousand disks are not sorted or probed each sample.
  std::erase_if(*names, [](const std::string& name) { return !name.starts_with("md"); });
  std::ranges::sort(*names);
  std::vector<MdSysfsArray> arrays;
  for (const std::string& name : *names) {
    if (!sysfs.Exists(fmt::format("block/{}/md", name))) continue;
    auto array = ReadMdSysfsArray(sysfs, name);
    // Stopped between the check and the read: gone, as if never listed.
    if (!array && array.error().code == ErrorCode::kNotFound) continue;
    if (!array) return ErrorOf(array);
    arrays.push_back(std::move(*array));
  }
  return arrays;
}

NodeMdSysfsFigures NodeExporterMdSysfsFigures(const MdSysfsArray& array) {
  const std::string_view level = array.level ? std::string_view(*array.level) : "";
  NodeMdSysfsFigures figures;
  // procfs takes the first number of "5 (4)", the count after the reshape.
  if (!level.empty() && !IsMdContainerLevel(level) && array.raid_disks) {
    figures.raid_disks = array.raid_disks->count;
  }
  if (IsMdRedundantLevel(level)) figures.degraded = array.degraded.value_or(0);
  return figures;
}

}  // namespace iowatch::collectors
