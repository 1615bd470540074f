#include "daemon/sources/filesystem/mount_table.h"

#include <map>
#include <set>
#include <tuple>

#include "collectors/filesystem/mountinfo.h"
#include "collectors/filesystem/statfs_helpers.h"
#include "daemon/sources/filesystem/filesystem_source.h"

namespace iowatch::daemon {
namespace {

// The mounts the settings select (their patterns were checked when the
// config was read).
Result<collectors::FilesystemFilter> FilterOf(const SamplerOptions& o) {
  const auto pattern = [&](const config::Setting& s) { return o.settings.Get<std::string>(s); };
  return collectors::MakeFilesystemFilter(pattern(kFsTypesInclude), pattern(kFsTypesExclude),
                                          pattern(kMountPointsInclude),
                                          pattern(kMountPointsExclude));
}

// The fsid of a btrfs mount's filesystem, by its source's device number
// (mountinfo's is an anonymous one): the source's kernel name ("dm-0" for
// /dev/mapper/vg-data) is what /sys/fs/btrfs/<fsid>/devices lists.
std::optional<std::string> BtrfsFsidOf(const FileTree& sysfs, const collectors::Mount& mount,
                                       const FilesystemSourceOptions& options,
                                       DeviceNameCache& names) {
  if (mount.fstype != "btrfs" || !mount.source.starts_with("/dev/")) return std::nullopt;
  const auto& device_of = options.device_of ? options.device_of : collectors::StatBlockDevice;
  const auto number = device_of(mount.source);
  if (!number) return std::nullopt;
  const collectors::DeviceNames& source = names.Of(sysfs, number->major, number->minor);
  if (source.name.empty()) return std::nullopt;
  auto fsid = collectors::FindBtrfsFsid(sysfs, source.name);
  if (!fsid) return std::nullopt;
  return std::move(*fsid);
}

// The series of a mount, all but its usage and errors; labels as MountLabel writes them.
FilesystemSeries Describe(const FileTree& sysfs, const collectors::Mount& mount,
                          DeviceNameCache& names) {
  FilesystemSeries series;
  series.device = collectors::MountLabel(mount.source);
  series.mount_point = collectors::MountLabel(mount.mount_point);
  series.fstype = collectors::MountLabel(mount.fstype);  // a FUSE subtype is anyone's text
  series.major = mount.major;
  series.minor = mount.minor;
  series.disk = names.Of(sysfs, mount.major, mount.minor).disk;
  // ext4 on 6.x kernels marks a remount after errors "emergency_ro", not "ro".
  series.readonly = collectors::HasMountOption(mount.super_options, "ro") ||
                    collectors::HasMountOption(mount.super_options, "emergency_ro");
  return series;
}

// Each of `selected`'s index in the selection of `in_use` (MountTable::kNew
// when absent), by mount id and device number.
std::vector<size_t> IndicesIn(const MountTable* in_use,
                              const std::vector<collectors::FilesystemMount>& selected) {
  using Key = std::tuple<uint32_t, uint32_t, uint32_t>;
  const auto key = [](const collectors::Mount& m) { return Key{m.id, m.major, m.minor}; };
  std::map<Key, size_t> index;
  if (in_use) {
    for (size_t i = 0; i < in_use->selected.size(); ++i) {
      index.emplace(key(in_use->selected[i].mount), i);
    }
  }
  std::vector<size_t> before;
  before.reserve(selected.size());
  for (const collectors::FilesystemMount& f : selected) {
    const auto it = index.find(key(f.mount));
    before.push_back(it == index.end() ? MountTable::kNew : it->second);
  }
  return before;
}

}  // namespace

const collectors::DeviceNames& DeviceNameCache::Of(const FileTree& sysfs, uint32_t major,
                                                   uint32_t minor) {
  const auto key = std::make_pair(major, minor);
  if (const auto it = names_.find(key); it != names_.end()) return it->second;
  collectors::DeviceNames names;
  if (major != 0) {
    names = collectors::FindDeviceNames(sysfs, major, minor).value_or(collectors::DeviceNames{});
  }
  return names_.emplace(key, std::move(names)).first->second;
}

void DeviceNameCache::KeepOnly(const std::vector<FilesystemSeries>& series) {
  std::set<std::pair<uint32_t, uint32_t>> mounted;
  for (const FilesystemSeries& s : series) mounted.emplace(s.major, s.minor);
  std::erase_if(names_, [&](const auto& entry) { return !mounted.contains(entry.first); });
}

MountTableBuild BuildMountTable(MountTableInputs inputs) {
  MountTableBuild build{.table = std::nullopt, .names = std::move(inputs.names)};
  auto text = collectors::ReadMountinfoText(inputs.procfs, kMountinfoRelative);
  if (!text) {
    build.table = ErrorOf(std::move(text));
    return build;
  }
  const MountTable* in_use = inputs.in_use.get();
  if (in_use && *in_use->text == text->text && in_use->options == inputs.options) return build;
  const auto filter = FilterOf(*inputs.options);
  if (!filter) {
    build.table = ErrorOf(filter);
    return build;
  }
  collectors::Mountinfo parsed =
      collectors::ParseMountinfoText(*text, inputs.procfs.PathOf(kMountinfoRelative).string());
  MountTable table{.text = std::make_shared<const std::string>(std::move(text->text)),
                   .options = inputs.options,
                   .skipped = std::move(parsed.skipped),
                   .selected = SelectFilesystems(std::move(parsed.mounts), *filter),
                   .described = {},
                   .btrfs_fsids = {},
                   .before = {}};
  table.described.reserve(table.selected.size());
  table.btrfs_fsids.reserve(table.selected.size());
  for (const collectors::FilesystemMount& f : table.selected) {
    table.described.push_back(Describe(inputs.sysfs, f.mount, build.names));
    table.btrfs_fsids.push_back(
        BtrfsFsidOf(inputs.sysfs, f.mount, inputs.options->filesystems, build.names));
  }
  table.before = IndicesIn(in_use, table.selected);
  build.names.KeepOnly(table.described);
  build.table = std::optional<MountTable>(std::move(table));
  return build;
}

}  // namespace iowatch::daemon
