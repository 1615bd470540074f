#include "collectors/md/mdstat.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <span>

#include "collectors/text/text_scan.h"

namespace iowatch::collectors {
namespace {

using Fields = std::span<const std::string_view>;

constexpr std::string_view kHeaderExpected =
    "expected '<name> : active|inactive [(read-only)|(auto-read-only)] [<level>] "
    "<device>[<role>][(F)(S)(W)(J)(R)]...'";
constexpr std::string_view kStatusExpected =
    "expected '<blocks> blocks [super <version>] [<chunk>k chunk(s)] [[<n>/<m>] [<U_ map>]]'";
constexpr std::string_view kSyncExpected =
    "expected '[<bar>] resync|recovery|check|repair|reshape = <percent>% (<done>/<total>) "
    "finish=<minutes>min speed=<K>K/sec'";
constexpr std::string_view kWaitExpected = "expected 'resync=DELAYED|PENDING|REMOTE'";

std::optional<uint32_t> ParseU32(std::string_view text) {
  const auto value = ParseU64(text);
  if (!value || *value > std::numeric_limits<uint32_t>::max()) return std::nullopt;
  return static_cast<uint32_t>(*value);
}

// A figure printed as "%lu.%lu" (percent, minutes): digits and a dot.
std::optional<double> ParseDecimal(std::string_view text) {
  if (text.empty() || text.find_first_not_of("0123456789.") != std::string_view::npos) {
    return std::nullopt;
  }
  double value = 0;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), value);
  if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// "prefix<value>suffix" without the prefix and suffix, or nullopt.
std::optional<std::string_view> Between(std::string_view field, std::string_view prefix,
                                        std::string_view suffix) {
  if (field.size() < prefix.size() + suffix.size() || !field.starts_with(prefix) ||
      !field.ends_with(suffix)) {
    return std::nullopt;
  }
  return field.substr(prefix.size(), field.size() - prefix.size() - suffix.size());
}

bool SetFlag(char flag, MdMember& member) {
  switch (flag) {
    case 'F':
      member.failed = true;
      return true;
    case 'S':
      member.spare = true;
      return true;
    case 'W':
      member.write_mostly = true;
      return true;
    case 'J':
      member.journal = true;
      return true;
    case 'R':
      member.replacement = true;
      return true;
    default:
      return false;
  }
}

// "sdc1[1](W)(F)": md.c prints each flag in its own parentheses.
std::optional<MdMember> ParseMember(std::string_view field) {
  const size_t open = field.find('[');
  const size_t close = field.find(']');
  if (open == 0 || open == std::string_view::npos || close == std::string_view::npos ||
      close < open) {
    return std::nullopt;
  }
  const auto role = ParseU32(field.substr(open + 1, close - open - 1));
  if (!role) return std::nullopt;
  MdMember member{.name = std::string(field.substr(0, open)), .role = *role};
  for (std::string_view flags = field.substr(close + 1); !flags.empty(); flags.remove_prefix(3)) {
    if (flags.size() < 3 || flags[0] != '(' || flags[2] != ')' || !SetFlag(flags[1], member)) {
      return std::nullopt;
    }
  }
  return member;
}

// A line that starts an array: "<name> : ...".
bool IsHeader(Fields fields) {
  return fields.size() >= 2 && fields[1] == ":" && fields[0] != "Personalities";
}

std::optional<MdArray> ParseHeader(Fields fields) {
  if (fields.size() < 3 || (fields[2] != "active" && fields[2] != "inactive")) {
    return std::nullopt;
  }
  MdArray array{.name = std::string(fields[0]), .active = fields[2] == "active"};
  size_t i = 3;
  if (i < fields.size() && fields[i] == "(read-only)") {
    array.read_only = MdReadOnly::kReadOnly;
    ++i;
  } else if (i < fields.size() && fields[i] == "(auto-read-only)") {
    array.read_only = MdReadOnly::kAutoReadOnly;
    ++i;
  }
  // The level is the one word without a role in brackets (an inactive
  // array may have none).
  if (i < fields.size() && fields[i].find('[') == std::string_view::npos) {
    array.level = std::string(fields[i++]);
  }
  for (; i < fields.size(); ++i) {
    auto member = ParseMember(fields[i]);
    if (!member) return std::nullopt;
    array.members.push_back(std::move(*member));
  }
  return array;
}

// "[4/3]" (raid disks / in sync) or "[U_UU]" (each raid disk, up or down).
bool ParseBracket(std::string_view field, MdArray& array) {
  const auto inside = Between(field, "[", "]");
  if (!inside || inside->empty()) return false;
  const size_t slash = inside->find('/');
  if (slash == std::string_view::npos) {
    if (inside->find_first_not_of("U_") != std::string_view::npos) return false;
    array.disk_map = std::string(*inside);
    return true;
  }
  array.raid_disks = ParseU32(inside->substr(0, slash));
  array.in_sync_disks = ParseU32(inside->substr(slash + 1));
  return array.raid_disks && array.in_sync_disks;
}

// "5853468288 blocks super 1.2 level 6, 64k chunk, algorithm 2 [8/8] [UUUUUUUU]";
// raid0 prints "512k chunks", raid10 "512K chunks".
bool ParseStatus(Fields fields, MdArray& array) {
  if (fields.size() < 2 || fields[1] != "blocks") return false;
  array.blocks = ParseU64(fields[0]);
  if (!array.blocks) return false;
  for (size_t i = 2; i < fields.size(); ++i) {
    if (fields[i].starts_with('[') && !ParseBracket(fields[i], array)) return false;
    const bool chunk = i + 1 < fields.size() && fields[i + 1].starts_with("chunk");
    if (!chunk) continue;
    auto size = Between(fields[i], "", "k");
    if (!size) size = Between(fields[i], "", "K");
    array.chunk_kib = size ? ParseU32(*size) : std::nullopt;
    if (!array.chunk_kib) return false;
  }
  return true;
}

// "(16775552/195310144)"
bool ParseProgress(std::string_view field, MdSync& sync) {
  const auto inside = Between(field, "(", ")");
  if (!inside) return false;
  const size_t slash = inside->find('/');
  if (slash == std::string_view::npos) return false;
  const auto done = ParseU64(inside->substr(0, slash));
  const auto total = ParseU64(inside->substr(slash + 1));
  if (!done || !total) return false;
  sync.done_blocks = *done;
  sync.total_blocks = *total;
  return true;
}

// status_resync: "[=>...]  recovery =  8.5% (16775552/195310144) finish=17.0min
// speed=259783K/sec"; "%3u" puts the percent in the "=" field at 100.0%.
std::optional<MdSync> ParseSync(Fields fields) {
  size_t i = fields[0].starts_with('[') ? 1 : 0;  // the progress bar
  if (fields.size() < i + 5) return std::nullopt;
  const auto action = ValueIn<MdSyncAction>(kMdSyncActionNames, fields[i++]);
  if (!action || !fields[i].starts_with('=')) return std::nullopt;
  MdSync sync{.action = *action};
  std::string_view percent = fields[i++].substr(1);
  if (percent.empty()) percent = fields[i++];
  const auto percent_value = ParseDecimal(Between(percent, "", "%").value_or(""));
  if (!percent_value || fields.size() < i + 3 || !ParseProgress(fields[i], sync)) {
    return std::nullopt;
  }
  sync.percent = *percent_value;
  const auto finish = ParseDecimal(Between(fields[i + 1], "finish=", "min").value_or(""));
  const auto speed = ParseU64(Between(fields[i + 2], "speed=", "K/sec").value_or(""));
  if (!finish || !speed) return std::nullopt;
  sync.finish_minutes = *finish;
  sync.speed_kib_per_s = *speed;
  return sync;
}

// An indented line after the status line: a sync, a waiting sync, or one we
// do not read (bitmap:, a future kernel's). Returns the expected form when
// the line is one of ours but malformed.
std::optional<std::string_view> ParseProgressLine(Fields fields, MdArray& array) {
  if (const auto word = Between(fields[0], "resync=", "")) {
    array.sync_wait = ValueIn<MdSyncWait>(kMdSyncWaitNames, *word);
    return array.sync_wait ? std::nullopt : std::optional(kWaitExpected);
  }
  if (!fields[0].starts_with('[') && !ValueIn<MdSyncAction>(kMdSyncActionNames, fields[0]))
    return std::nullopt;
  array.sync = ParseSync(fields);
  return array.sync ? std::nullopt : std::optional(kSyncExpected);
}

std::string_view TrimLeft(std::string_view line) {
  const size_t start = line.find_first_not_of(" \t");
  return start == std::string_view::npos ? std::string_view() : line.substr(start);
}

// procfs looks for its words in the sync line: "recovery", "reshape",
// "check", else "resync" (resync=DELAYED|PENDING too); "repair" holds none
// of them, so the array keeps its header's state.
std::optional<std::string_view> NodeMdState(const MdArray& array) {
  const std::string_view header = array.active ? "active" : "inactive";
  if (array.sync_wait) return "resync";
  if (!array.sync) return header;
  switch (array.sync->action) {
    case MdSyncAction::kRecovery:
      return "recovering";
    case MdSyncAction::kReshape:
      return std::nullopt;
    case MdSyncAction::kCheck:
      return "check";
    case MdSyncAction::kResync:
      return "resync";
    case MdSyncAction::kRepair:
      return header;
  }
  return header;
}

// procfs: 0 while a sync waits, the done blocks while one runs, else all.
uint64_t NodeMdBlocksSynced(const MdArray& array) {
  if (array.sync_wait) return 0;
  if (array.sync && array.sync->action != MdSyncAction::kRepair) return array.sync->done_blocks;
  return array.blocks.value_or(0);
}

}  // namespace

Result<std::vector<MdArray>> ParseMdstat(std::string_view text, std::string_view path) {
  std::vector<MdArray> arrays;
  bool in_array = false;
  bool status_seen = false;
  std::optional<Error> failure;
  ForEachLine(text, [&](std::string_view line, int number) {
    if (failure) return;
    const auto fail = [&](std::string_view expected) {
      failure = Error::Parse(fmt::format("{}, found '{}'", expected, TrimLeft(line)),
                             std::string(path), number);
    };
    const std::vector<std::string_view> fields = SplitFields(line);
    if (fields.empty()) return;  // md.c leaves blank and whitespace-only lines
    if (line[0] != ' ' && line[0] != '\t') {
      // Personalities, unused devices, or an array's header.
      in_array = IsHeader(fields);
      if (!in_array) return;
      auto array = ParseHeader(fields);
      if (!array) return fail(kHeaderExpected);
      arrays.push_back(std::move(*array));
      status_seen = false;
      return;
    }
    if (!in_array) return;
    if (!status_seen) {
      status_seen = true;
      if (!ParseStatus(fields, arrays.back())) fail(kStatusExpected);
      return;
    }
    if (const auto expected = ParseProgressLine(fields, arrays.back())) fail(*expected);
  });
  if (failure) return std::unexpected(*failure);
  return arrays;
}

Result<std::vector<MdArray>> ReadMdstat(const FileTree& procfs) {
  auto text = procfs.Read("mdstat", kMaxProcfsFileBytes);
  if (!text) return ErrorOf(text);
  return ParseMdstat(*text, procfs.PathOf("mdstat").string());
}

NodeMdFigures NodeExporterMdFigures(const MdArray& array) {
  NodeMdFigures figures{.state = NodeMdState(array),
                        .blocks = array.blocks.value_or(0),
                        .blocks_synced = NodeMdBlocksSynced(array)};
  for (const MdMember& member : array.members) {
    figures.disks_failed += member.failed ? 1 : 0;
    figures.disks_spare += member.spare ? 1 : 0;
  }
  if (array.level == "raid0" || array.level == "linear") {
    // No [n/m]: procfs counts every member as active and required, spares
    // and failed ones too, whether the array is active or not.
    figures.disks_active = figures.disks_required = array.members.size();
  } else if (array.active) {
    figures.disks_required = array.raid_disks.value_or(0);
    figures.disks_active = array.in_sync_disks.value_or(0);
  }  // an inactive array's [n/m] is not read: 0 and 0
  return figures;
}

}  // namespace iowatch::collectors
