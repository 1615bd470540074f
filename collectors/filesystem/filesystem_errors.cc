#include "collectors/filesystem/filesystem_errors.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>

#include "collectors/text/text_scan.h"

namespace iowatch::collectors {
namespace {

// One sysfs attribute holding a decimal number (and its newline).
Result<uint64_t> ReadNumber(const FileTree& sysfs, const std::string& relative) {
  auto text = sysfs.Read(relative);
  if (!text) return ErrorOf(text);
  std::string_view value = *text;
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.remove_suffix(1);
  if (const auto number = ParseU64(value)) return *number;
  return std::unexpected(Error::Parse(fmt::format("expected a decimal number, found '{}'", value),
                                      sysfs.PathOf(relative).string(), 1));
}

// error_stats: "write_errs 0\nread_errs 0\n…", one counter per line, in any order.
Result<BtrfsDeviceErrors> ParseErrorStats(std::string_view text, std::string devid,
                                          const std::string& path) {
  BtrfsDeviceErrors out{std::move(devid), {}};
  std::optional<Error> failure;
  ForEachLine(text, [&](std::string_view line, int number) {
    const std::vector<std::string_view> fields = SplitFields(line);
    if (fields.empty() || failure) return;
    const auto value = fields.size() == 2 ? ParseU64(fields[1]) : std::nullopt;
    if (!value) {
      failure =
          Error::Parse(fmt::format("expected 'NAME_errs COUNT', found '{}'", line), path, number);
      return;
    }
    for (size_t i = 0; i < kBtrfsErrorTypes.size(); ++i) {
      if (fields[0] == fmt::format("{}_errs", kBtrfsErrorTypes[i])) out.counts[i] = *value;
    }
  });
  if (failure) return std::unexpected(*failure);
  return out;
}

}  // namespace

Result<Ext4Errors> ReadExt4Errors(const FileTree& sysfs, std::string_view device) {
  const std::string dir = fmt::format("fs/ext4/{}/", device);
  Ext4Errors out;
  for (const auto& [name, field] : {std::pair{"errors_count", &Ext4Errors::count},
                                    std::pair{"first_error_time", &Ext4Errors::first_time},
                                    std::pair{"last_error_time", &Ext4Errors::last_time}}) {
    auto value = ReadNumber(sysfs, dir + name);
    if (!value) return ErrorOf(value);
    out.*field = *value;
  }
  return out;
}

Result<BlockDeviceNumber> StatBlockDevice(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ErrnoError(errno, "cannot stat", path);
  if (!S_ISBLK(st.st_mode)) {
    return MakeError(ErrorCode::kInvalidArgument, "not a block device", path);
  }
  return BlockDeviceNumber{major(st.st_rdev), minor(st.st_rdev)};
}

Result<std::string> FindBtrfsFsid(const FileTree& sysfs, std::string_view device) {
  auto filesystems = sysfs.ListDirectories("fs/btrfs");
  if (!filesystems) return ErrorOf(filesystems);
  std::ranges::sort(*filesystems);
  for (const std::string& fsid : *filesystems) {
    auto devices = sysfs.List(fmt::format("fs/btrfs/{}/devices", fsid));
    if (devices && std::ranges::find(*devices, device) != devices->end()) return fsid;
  }
  return std::unexpected(
      Error::NotFound(fmt::format("no btrfs filesystem lists {} among its devices", device),
                      sysfs.PathOf("fs/btrfs").string()));
}

Result<std::vector<BtrfsDeviceErrors>> ReadBtrfsErrors(const FileTree& sysfs,
                                                       std::string_view fsid) {
  const std::string dir = fmt::format("fs/btrfs/{}/devinfo", fsid);
  auto devids = sysfs.ListDirectories(dir);
  if (!devids) return ErrorOf(devids);
  std::ranges::sort(*devids, [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;  // numerically
  });
  std::vector<BtrfsDeviceErrors> out;
  for (std::string& devid : *devids) {
    const std::string relative = fmt::format("{}/{}/error_stats", dir, devid);
    auto text = sysfs.Read(relative);
    if (!text) return ErrorOf(text);
    auto errors = ParseErrorStats(*text, std::move(devid), sysfs.PathOf(relative).string());
    if (!errors) return ErrorOf(errors);
    out.push_back(std::move(*errors));
  }
  return out;
}

}  // namespace iowatch::collectors
