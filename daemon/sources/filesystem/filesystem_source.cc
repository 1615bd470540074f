#include "daemon/sources/filesystem/filesystem_source.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "collectors/block_devices.h"
#include "collectors/filesystem/filesystem_errors.h"
#include "collectors/filesystem/statfs_helpers.h"
#include "collectors/filesystem/filesystem_mounts.h"
#include "collectors/mountinfo.h"
#include "daemon/sources/filesystem/usage_asker.h"

namespace iowatch::daemon {
namespace {

constexpr char kMountinfo[] = "self/mountinfo";

class FilesystemSource final : public SampleSource {
 public:
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  using DeviceNames = collectors::DeviceNames;
  // The names of each device number, walking sysfs again only when a
  // filesystem on a device not seen before appears.
  const DeviceNames& NamesOf(const FileTree& sysfs, uint32_t major, uint32_t minor);
  // The errors the filesystem keeps in sysfs, where its type keeps any.
  void ReadErrors(const FileTree& sysfs, const collectors::Mount& mount, const DeviceNames& names,
                  FilesystemSeries& series);
  // How long one mount may take: mount_timeout, and never past 80 % of the
  // sample's read deadline, which leaves the rest of the sample its time.
  static std::chrono::steady_clock::time_point AskDeadline(
      const SamplerOptions& options, std::chrono::steady_clock::time_point sample_start,
      std::chrono::steady_clock::time_point now);

  UsageAsker asker_;
  // statfs in helper processes (the options' reader when it is empty).
  collectors::FilesystemUsageReader helper_reader_ =
      collectors::HelperUsageReader(std::make_shared<collectors::StatfsHelpers>());
  std::map<std::pair<uint32_t, uint32_t>, DeviceNames> names_;
  std::map<std::string, std::string, std::less<>> btrfs_fsids_;  // by member device
  uint64_t skipped_total_ = 0;
};

const FilesystemSource::DeviceNames& FilesystemSource::NamesOf(const FileTree& sysfs,
                                                               uint32_t major, uint32_t minor) {
  const auto key = std::make_pair(major, minor);
  if (const auto it = names_.find(key); it != names_.end()) return it->second;
  DeviceNames names;
  if (major != 0) {  // 0: no block device (tmpfs, NFS, FUSE, btrfs)
    names = collectors::FindDeviceNames(sysfs, major, minor).value_or(DeviceNames{});
  }
  return names_.emplace(key, std::move(names)).first->second;
}

void FilesystemSource::ReadErrors(const FileTree& sysfs, const collectors::Mount& mount,
                                  const DeviceNames& names, FilesystemSeries& series) {
  if (mount.fstype == "ext4" && !names.name.empty()) {
    if (auto errors = collectors::ReadExt4Errors(sysfs, names.name)) series.ext4_errors = *errors;
  } else if (mount.fstype == "btrfs" && mount.source.starts_with("/dev/")) {
    // btrfs shows an anonymous device number: its member device is the source.
    const std::string member = std::filesystem::path(mount.source).filename().string();
    auto fsid = btrfs_fsids_.find(member);
    if (fsid == btrfs_fsids_.end()) {
      auto found = collectors::FindBtrfsFsid(sysfs, member);
      if (!found) return;
      fsid = btrfs_fsids_.emplace(member, std::move(*found)).first;
    }
    if (auto errors = collectors::ReadBtrfsErrors(sysfs, fsid->second)) {
      series.btrfs_errors = std::move(*errors);
    } else {
      btrfs_fsids_.erase(fsid);  // remounted, or another filesystem now: found again next time
    }
  }
}

std::chrono::steady_clock::time_point FilesystemSource::AskDeadline(
    const SamplerOptions& options, std::chrono::steady_clock::time_point sample_start,
    std::chrono::steady_clock::time_point now) {
  const auto after = [](double seconds) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(seconds));
  };
  auto deadline = now + after(options.filesystems.mount_timeout_seconds);
  if (options.read_deadline_seconds > 0) {
    deadline = std::min(deadline, sample_start + after(0.8 * options.read_deadline_seconds));
  }
  return deadline;
}

void FilesystemSource::Collect(const FileTree& procfs, const FileTree& sysfs,
                               const SourceContext& context, Snapshot& out) {
  const FilesystemSourceOptions& options = context.options->filesystems;
  if (!options.enabled) return;
  const double start = context.now();
  CollectorStatus status{"filesystem", 0, false, 0, {}, {}};
  auto text = procfs.Read(kMountinfo);
  if (!text) {
    status.error = text.error().ToString();
  } else {
    const collectors::Mountinfo table =
        collectors::ParseMountinfo(*text, procfs.PathOf(kMountinfo).string());
    skipped_total_ += table.skipped.size();
    if (!table.skipped.empty()) status.parse_error = table.skipped.front().ToString();
    const auto sample_start = std::chrono::steady_clock::now();
    for (const auto& [mount, reachable] : SelectFilesystems(table.mounts, options.filter)) {
      FilesystemSeries& series = out.filesystems.series.emplace_back();
      series.device = mount.source;
      series.mount_point = mount.mount_point;
      series.fstype = mount.fstype;
      series.major = mount.major;
      series.minor = mount.minor;
      const DeviceNames& names = NamesOf(sysfs, mount.major, mount.minor);
      series.disk = names.disk;
      // ext4 on 6.x kernels marks a remount after errors "emergency_ro", not "ro".
      series.readonly = collectors::HasMountOption(mount.super_options, "ro") ||
                        collectors::HasMountOption(mount.super_options, "emergency_ro");
      ReadErrors(sysfs, mount, names, series);
      if (!reachable) continue;  // hidden under another mount here: what covers it would answer
      const auto now = std::chrono::steady_clock::now();
      const auto deadline = AskDeadline(*context.options, sample_start, now);
      if (deadline <= now) continue;  // the sample's time ran out: asked next sample
      const auto& read = options.read_usage ? options.read_usage : helper_reader_;
      UsageAsker::Answer answer = asker_.Ask(read, mount.mount_point, deadline);
      if (answer.usage) series.usage = *answer.usage;
    }
    // Devices no longer mounted (a container's tmpfs) are forgotten.
    std::erase_if(names_, [&](const auto& entry) {
      return std::ranges::none_of(out.filesystems.series, [&](const FilesystemSeries& s) {
        return std::pair(s.major, s.minor) == entry.first;
      });
    });
    out.filesystems.stuck = asker_.Stuck();
    status.success = true;
  }
  status.parse_errors_total = skipped_total_;
  status.duration_seconds = context.now() - start;
  out.collectors.push_back(std::move(status));
}

}  // namespace

const SourceDescriptor& FilesystemSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"filesystem"};
  static constexpr SourceDescriptor kDescriptor =
      Registered<FilesystemSource, &Snapshot::filesystems>({
          .name = "filesystem",
          .reads = "<procfs>/self/mountinfo, then statvfs(3) of one mount per filesystem",
          .collectors = kCollectors,
          .config_switch = "collectors.filesystem.enabled",
          .enabled = [](const SamplerOptions& o) { return o.filesystems.enabled; },
          .add_families = AddFilesystemFamilies,
      });
  return kDescriptor;
}

}  // namespace iowatch::daemon
