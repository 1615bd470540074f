#include "collectors/cgroup/cgroup_mounts.h"

#include <fmt/format.h>

#include <vector>

#include "collectors/text_scan.h"

namespace iowatch::collectors {
namespace {

constexpr std::string_view kExpected =
    "expected 'ID PARENT MAJOR:MINOR ROOT MOUNT_POINT OPTIONS [TAGS...] - TYPE SOURCE "
    "SUPER_OPTIONS'";

// mountinfo escapes space, tab, newline and backslash in paths as \ooo.
std::string Unescape(std::string_view field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const std::string_view digits = field.substr(i + 1, 3);
      if (digits.find_first_not_of("01234567") == std::string_view::npos) {
        out +=
            static_cast<char>((digits[0] - '0') * 64 + (digits[1] - '0') * 8 + (digits[2] - '0'));
        i += 3;
        continue;
      }
    }
    out += field[i];
  }
  return out;
}

bool HasOption(std::string_view options, std::string_view wanted) {
  while (!options.empty()) {
    const size_t comma = options.find(',');
    if (options.substr(0, comma) == wanted) return true;
    if (comma == std::string_view::npos) break;
    options.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

Result<CgroupMounts> ParseCgroupMounts(std::string_view mountinfo, std::string_view path) {
  CgroupMounts mounts;
  std::optional<Error> failure;
  ForEachLine(mountinfo, [&](std::string_view line, int number) {
    if (failure) return;
    const std::vector<std::string_view> fields = SplitFields(line);
    if (fields.empty()) return;
    size_t dash = 6;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (dash + 3 >= fields.size()) {  // the separator, then type, source and super options
      failure =
          Error::Parse(fmt::format("{}, found '{}'", kExpected, line), std::string(path), number);
      return;
    }
    const std::string_view type = fields[dash + 1];
    if (type == "cgroup2" && !mounts.unified) {
      mounts.unified = Unescape(fields[4]);
    } else if (type == "cgroup" && !mounts.blkio && HasOption(fields[dash + 3], "blkio")) {
      mounts.blkio = Unescape(fields[4]);
    }
  });
  if (failure) return std::unexpected(*failure);
  return mounts;
}

std::optional<std::string> RelativeToSysfs(std::string_view mount_point) {
  if (mount_point == "/sys") return std::string(".");
  if (!mount_point.starts_with("/sys/")) return std::nullopt;
  return std::string(mount_point.substr(5));
}

}  // namespace iowatch::collectors
