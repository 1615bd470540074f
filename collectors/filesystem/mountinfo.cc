#include "collectors/filesystem/mountinfo.h"

#include <fmt/format.h>

#include <charconv>

#include "collectors/text/text_scan.h"

namespace iowatch::collectors {
namespace {

constexpr std::string_view kMountinfoLayout =
    "expected 'ID PARENT MAJOR:MINOR ROOT MOUNT_POINT OPTIONS [TAGS...] - TYPE SOURCE "
    "SUPER_OPTIONS'";

// mountinfo escapes space, tab, newline and backslash in paths as \ooo.
std::string UnescapeMountField(std::string_view field) {
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

bool ParseMountNumber(std::string_view text, uint32_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && !text.empty();
}

bool ParseMountDevice(std::string_view text, uint32_t& major, uint32_t& minor) {
  const size_t colon = text.find(':');
  return colon != std::string_view::npos && ParseMountNumber(text.substr(0, colon), major) &&
         ParseMountNumber(text.substr(colon + 1), minor);
}

// One line's mount; false when it is not in mountinfo's layout.
bool ParseMountLine(std::string_view line, Mount& m) {
  const std::vector<std::string_view> fields = SplitFields(line);
  size_t dash = 6;  // the optional tags end at "-"
  while (dash < fields.size() && fields[dash] != "-") ++dash;
  // The separator, then type, source and super options.
  if (fields.size() < 6 || dash + 3 >= fields.size()) return false;
  if (!ParseMountNumber(fields[0], m.id) || !ParseMountNumber(fields[1], m.parent_id) ||
      !ParseMountDevice(fields[2], m.major, m.minor)) {
    return false;
  }
  m.root = UnescapeMountField(fields[3]);
  m.mount_point = UnescapeMountField(fields[4]);
  m.mount_options = std::string(fields[5]);
  m.fstype = std::string(fields[dash + 1]);
  m.source = UnescapeMountField(fields[dash + 2]);
  m.super_options = std::string(fields[dash + 3]);
  return true;
}

}  // namespace

void ParseMountinfoLine(std::string_view line, int number, std::string_view path, Mountinfo& out) {
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;
  Mount mount;
  if (ParseMountLine(line, mount)) {
    out.mounts.push_back(std::move(mount));
  } else {
    out.skipped.push_back(Error::Parse(fmt::format("{}, found '{}'", kMountinfoLayout, line),
                                       std::string(path), number));
  }
}

Mountinfo ParseMountinfo(std::string_view text, std::string_view path) {
  Mountinfo out;
  ForEachLine(text, [&](std::string_view line, int number) {
    ParseMountinfoLine(line, number, path, out);
  });
  return out;
}

Result<MountinfoText> ReadMountinfoText(const FileTree& procfs, std::string_view relative,
                                        const MountinfoLimits& limits) {
  MountinfoText out;
  size_t kept_bytes = 0;
  int first_dropped = 0;
  int dropped = 0;
  const auto drop = [&](int number) {
    if (dropped++ == 0) first_dropped = number;
    out.text += '\n';
  };
  const Status read = ForEachLineOfFile(
      procfs.PathOf(relative),
      [&](std::string_view line, int number) {
        if (kept_bytes + line.size() > limits.max_bytes) {
          drop(number);
        } else {
          kept_bytes += line.size() + 1;
          out.text.append(line);
          out.text += '\n';
        }
      },
      [&](int number) { drop(number); }, {.max_bytes = limits.max_line_bytes});
  if (!read) return std::unexpected(read.error());
  if (dropped > 0) {
    out.dropped =
        Error::Parse(fmt::format("{} mounts not read: the table is past {} MiB (or a line past "
                                 "{} KiB) from this line on; the mounts before it are reported",
                                 dropped, limits.max_bytes >> 20, limits.max_line_bytes >> 10),
                     procfs.PathOf(relative).string(), first_dropped);
  }
  return out;
}

Mountinfo ParseMountinfoText(const MountinfoText& table, std::string_view path) {
  Mountinfo out = ParseMountinfo(table.text, path);
  // First: the one a source shows and logs.
  if (table.dropped) out.skipped.insert(out.skipped.begin(), *table.dropped);
  return out;
}

Result<Mountinfo> ReadMountinfo(const FileTree& procfs, std::string_view relative,
                                const MountinfoLimits& limits) {
  auto text = ReadMountinfoText(procfs, relative, limits);
  if (!text) return ErrorOf(std::move(text));
  return ParseMountinfoText(*text, procfs.PathOf(relative).string());
}

bool HasMountOption(std::string_view options, std::string_view wanted) {
  while (!options.empty()) {
    const size_t comma = options.find(',');
    if (options.substr(0, comma) == wanted) return true;
    if (comma == std::string_view::npos) break;
    options.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace iowatch::collectors
