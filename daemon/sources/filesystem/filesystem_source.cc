#include "daemon/sources/filesystem/filesystem_source.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collectors/disk/block_devices.h"
#include "collectors/filesystem/filesystem_errors.h"
#include "collectors/filesystem/filesystem_mounts.h"
#include "collectors/filesystem/mount_table_watch.h"
#include "collectors/filesystem/mountinfo.h"
#include "collectors/filesystem/statfs_helpers.h"
#include "daemon/sources/filesystem/usage_asker.h"

namespace iowatch::daemon {
namespace {

constexpr char kMountinfo[] = "self/mountinfo";

using steady = std::chrono::steady_clock;

constexpr config::Setting kFilesystemSettings[] = {kFilesystemEnabled,  kFsTypesInclude,
                                                   kFsTypesExclude,     kMountPointsInclude,
                                                   kMountPointsExclude, kMountTimeout};

// The mounts the settings select (their patterns were checked when the
// config was read).
Result<collectors::FilesystemFilter> FilterOf(const SamplerOptions& o) {
  const auto pattern = [&](const config::Setting& s) { return o.settings.Get<std::string>(s); };
  return collectors::MakeFilesystemFilter(pattern(kFsTypesInclude), pattern(kFsTypesExclude),
                                          pattern(kMountPointsInclude),
                                          pattern(kMountPointsExclude));
}

class FilesystemSource final : public SampleSource {
 public:
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  using DeviceNames = collectors::DeviceNames;
  using Selected = std::vector<collectors::FilesystemMount>;
  // A reported filesystem as the next samples know it: its mount's id and
  // device number (numbers: 36,000 mount points are long keys to compare).
  using MountKey = std::tuple<uint32_t, uint32_t, uint32_t>;
  // What a filesystem keeps between samples: its last figures (a sample
  // that runs out of time before its turn reports them again), and what was
  // looked up once when it appeared.
  struct Known {
    std::optional<collectors::FilesystemUsage> usage;
    std::optional<std::string> btrfs_fsid;  // none: not btrfs, or no fsid lists its device
    std::optional<uint64_t> errors;         // the error counters' sum when last read
  };

  // What one mount table gave: its selection, each filesystem's series but
  // its usage and errors, and what each keeps between samples (in the
  // selection's order). Built again only when the table or the options change.
  struct Table {
    std::string text;  // mountinfo as read (collectors::MountinfoText)
    std::shared_ptr<const SamplerOptions> options;
    std::vector<Error> skipped;
    Selected selected;
    std::vector<FilesystemSeries> described;
    std::vector<Known> known;
  };

  // The mount table as it is now: read again only when the watch or an
  // error counter says it may have changed (or the options did). Fails when
  // it cannot be read, or a filter does not compile.
  Status RefreshTable(const FileTree& procfs, const FileTree& sysfs,
                      const std::shared_ptr<const SamplerOptions>& options);
  // The table of `text` read from `path`, selected by the options' filters;
  // each filesystem still mounted keeps what it knew. Fails (the table kept
  // as it was) when a filter does not compile.
  Status Rebuild(const FileTree& sysfs, collectors::MountinfoText text, std::string_view path,
                 const std::shared_ptr<const SamplerOptions>& options);
  // The names of each device number, walking sysfs again only when a
  // filesystem on a device not seen before appears.
  const DeviceNames& NamesOf(const FileTree& sysfs, uint32_t major, uint32_t minor);
  // The fsid of a btrfs mount's filesystem, by its source's device number
  // (mountinfo's is an anonymous one): the source's kernel name ("dm-0" for
  // /dev/mapper/vg-data) is what /sys/fs/btrfs/<fsid>/devices lists.
  std::optional<std::string> BtrfsFsidOf(const FileTree& sysfs, const collectors::Mount& mount,
                                         const FilesystemSourceOptions& options);
  // The series of a mount, all but its usage and errors; labels as MountLabel writes them.
  FilesystemSeries Describe(const FileTree& sysfs, const collectors::Mount& mount);
  // The errors the filesystem keeps in sysfs, where its type keeps any. A
  // count that moved reads the table again next sample: the error may have
  // turned the filesystem read-only, which no mount event announces.
  void ReadErrors(const FileTree& sysfs, const collectors::Mount& mount, Known& known,
                  FilesystemSeries& series);
  // statvfs of the reachable mounts, from where the last sample stopped, until
  // the deadline; each mount's figures into `known` (kept when not reached).
  void AskUsage(const Selected& selected, std::vector<Known>& known, const SourceContext& context,
                steady::time_point sample_start);
  // How long one mount may take (mount_timeout).
  static steady::duration MountTimeout(const SamplerOptions& options);
  // When the sample stops asking: 80 % of its read deadline, which leaves
  // the rest of the sample its time.
  static steady::time_point AskDeadline(const SamplerOptions& options,
                                        steady::time_point sample_start);
  // Forgets the device names of devices no longer mounted (a container's tmpfs).
  void ForgetUnmounted(const std::vector<FilesystemSeries>& series);

  UsageAsker asker_;
  collectors::MountTableWatch watch_;
  bool read_again_ = false;  // the next sample reads the table whatever the watch says
  // statfs in helper processes (the options' reader when it is empty).
  collectors::FilesystemUsageBatchReader helper_reader_ =
      collectors::HelperUsageReader(std::make_shared<collectors::StatfsHelpers>());
  std::map<std::pair<uint32_t, uint32_t>, DeviceNames> names_;
  std::optional<Table> table_;
  size_t next_ = 0;  // the position in the selection the next sample asks first
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

std::optional<std::string> FilesystemSource::BtrfsFsidOf(const FileTree& sysfs,
                                                         const collectors::Mount& mount,
                                                         const FilesystemSourceOptions& options) {
  if (!mount.source.starts_with("/dev/")) return std::nullopt;
  const auto& device_of = options.device_of ? options.device_of : collectors::StatBlockDevice;
  const auto number = device_of(mount.source);
  if (!number) return std::nullopt;
  const DeviceNames& names = NamesOf(sysfs, number->major, number->minor);
  if (names.name.empty()) return std::nullopt;
  auto fsid = collectors::FindBtrfsFsid(sysfs, names.name);
  if (!fsid) return std::nullopt;
  return std::move(*fsid);
}

FilesystemSeries FilesystemSource::Describe(const FileTree& sysfs, const collectors::Mount& mount) {
  FilesystemSeries series;
  series.device = collectors::MountLabel(mount.source);
  series.mount_point = collectors::MountLabel(mount.mount_point);
  series.fstype = collectors::MountLabel(mount.fstype);  // a FUSE subtype is anyone's text
  series.major = mount.major;
  series.minor = mount.minor;
  series.disk = NamesOf(sysfs, mount.major, mount.minor).disk;
  // ext4 on 6.x kernels marks a remount after errors "emergency_ro", not "ro".
  series.readonly = collectors::HasMountOption(mount.super_options, "ro") ||
                    collectors::HasMountOption(mount.super_options, "emergency_ro");
  return series;
}

void FilesystemSource::ReadErrors(const FileTree& sysfs, const collectors::Mount& mount,
                                  Known& known, FilesystemSeries& series) {
  std::optional<uint64_t> errors;
  if (mount.fstype == "ext4") {
    const DeviceNames& names = NamesOf(sysfs, mount.major, mount.minor);
    if (names.name.empty()) return;
    if (auto read = collectors::ReadExt4Errors(sysfs, names.name)) {
      series.ext4_errors = *read;
      errors = read->count;
    }
  } else if (known.btrfs_fsid) {
    if (auto read = collectors::ReadBtrfsErrors(sysfs, *known.btrfs_fsid)) {
      series.btrfs_errors = std::move(*read);
      errors = 0;
      for (const collectors::BtrfsDeviceErrors& device : series.btrfs_errors) {
        errors = std::accumulate(device.counts.begin(), device.counts.end(), *errors);
      }
    } else {
      known.btrfs_fsid.reset();  // gone from sysfs: not looked for again while mounted
    }
  }
  if (errors && known.errors && *errors != *known.errors) read_again_ = true;
  known.errors = errors;
}

steady::duration FilesystemSource::MountTimeout(const SamplerOptions& options) {
  return std::chrono::duration_cast<steady::duration>(
      options.settings.Get<std::chrono::milliseconds>(kMountTimeout));
}

steady::time_point FilesystemSource::AskDeadline(const SamplerOptions& options,
                                                 steady::time_point sample_start) {
  if (options.read_deadline_seconds <= 0) return steady::time_point::max();
  return sample_start + std::chrono::duration_cast<steady::duration>(
                            std::chrono::duration<double>(0.8 * options.read_deadline_seconds));
}

void FilesystemSource::AskUsage(const Selected& selected, std::vector<Known>& known,
                                const SourceContext& context, steady::time_point sample_start) {
  const FilesystemSourceOptions& options = context.options->filesystems;
  const auto& read = options.read_usage ? collectors::OneByOne(options.read_usage) : helper_reader_;
  const size_t count = selected.size();
  const size_t first = count == 0 ? 0 : next_ % count;
  // From where the last sample stopped; a mount hidden under another here
  // is not asked (what covers it would answer).
  std::vector<size_t> order;
  std::vector<UsageAsker::Request> requests;
  for (size_t k = 0; k < count; ++k) {
    const size_t i = (first + k) % count;
    if (!selected[i].reachable) {
      known[i].usage.reset();
      continue;
    }
    order.push_back(i);
    requests.push_back(
        {selected[i].mount.mount_point, UsageAsker::PoolOf(selected[i].mount.fstype)});
  }
  const std::vector<UsageAsker::Answer> answers = asker_.AskAll(
      read, requests, MountTimeout(*context.options), AskDeadline(*context.options, sample_start));
  next_ = first;
  for (size_t k = 0; k < answers.size(); ++k) {
    const UsageAsker::Answer& answer = answers[k];
    if (!answer.reached) {  // the sample's time ran out: the next one starts here
      next_ = order[k];
      return;
    }
    // A pending call is not judged yet: the mount keeps its figures.
    if (!answer.pending)
      known[order[k]].usage = answer.usage ? std::optional(*answer.usage) : std::nullopt;
  }
}

void FilesystemSource::ForgetUnmounted(const std::vector<FilesystemSeries>& series) {
  std::set<std::pair<uint32_t, uint32_t>> mounted;
  for (const FilesystemSeries& s : series) mounted.emplace(s.major, s.minor);
  std::erase_if(names_, [&](const auto& entry) { return !mounted.contains(entry.first); });
}

Status FilesystemSource::RefreshTable(const FileTree& procfs, const FileTree& sysfs,
                                      const std::shared_ptr<const SamplerOptions>& options) {
  const std::filesystem::path path = procfs.PathOf(kMountinfo);
  const bool changed = watch_.Changed(path) || read_again_;
  if (!changed && table_ && table_->options == options) return {};
  // A table read but refused (unreadable, a bad filter) is read again next
  // sample: the watch has reported its change.
  read_again_ = true;
  auto text = collectors::ReadMountinfoText(procfs, kMountinfo);
  if (!text) return ErrorOf(std::move(text));
  if (!table_ || table_->text != text->text || table_->options != options) {
    if (Status built = Rebuild(sysfs, std::move(*text), path.string(), options); !built) {
      return built;
    }
  }
  read_again_ = false;
  return {};
}

Status FilesystemSource::Rebuild(const FileTree& sysfs, collectors::MountinfoText text,
                                 std::string_view path,
                                 const std::shared_ptr<const SamplerOptions>& options) {
  const auto filter = FilterOf(*options);
  if (!filter) return ErrorOf(filter);
  collectors::Mountinfo parsed = collectors::ParseMountinfoText(text, path);
  Table table{.text = std::move(text.text),
              .options = options,
              .skipped = std::move(parsed.skipped),
              .selected = SelectFilesystems(std::move(parsed.mounts), *filter),
              .described = {},
              .known = {}};
  std::map<MountKey, Known> before;
  if (table_) {
    for (size_t i = 0; i < table_->selected.size(); ++i) {
      const collectors::Mount& m = table_->selected[i].mount;
      before.emplace(MountKey{m.id, m.major, m.minor}, std::move(table_->known[i]));
    }
  }
  table.described.reserve(table.selected.size());
  table.known.reserve(table.selected.size());
  for (const collectors::FilesystemMount& f : table.selected) {
    const collectors::Mount& mount = f.mount;
    auto node = before.extract(MountKey{mount.id, mount.major, mount.minor});
    Known& known = table.known.emplace_back(node.empty() ? Known{} : std::move(node.mapped()));
    if (node.empty() && mount.fstype == "btrfs") {
      known.btrfs_fsid = BtrfsFsidOf(sysfs, mount, options->filesystems);
    }
    table.described.push_back(Describe(sysfs, mount));
  }
  table_ = std::move(table);
  ForgetUnmounted(table_->described);
  return {};
}

void FilesystemSource::Collect(const FileTree& procfs, const FileTree& sysfs,
                               const SourceContext& context, Snapshot& out) {
  if (!context.options->settings.Get<bool>(kFilesystemEnabled)) return;
  const auto sample_start = steady::now();
  const double start = context.now();
  CollectorStatus status{"filesystem", 0, false, 0, {}, {}};
  if (const Status refreshed = RefreshTable(procfs, sysfs, context.options); !refreshed) {
    status.error = refreshed.error().ToString();
  } else {
    Table& table = *table_;
    skipped_total_ += table.skipped.size();
    if (!table.skipped.empty()) status.parse_error = table.skipped.front().ToString();
    out.filesystems.series = table.described;
    for (size_t i = 0; i < table.selected.size(); ++i) {
      ReadErrors(sysfs, table.selected[i].mount, table.known[i], out.filesystems.series[i]);
    }
    AskUsage(table.selected, table.known, context, sample_start);
    for (size_t i = 0; i < table.selected.size(); ++i) {
      out.filesystems.series[i].usage = table.known[i].usage;
    }
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
          .config_switch = kFilesystemEnabled.key,
          .settings = kFilesystemSettings,
          .enabled =
              [](const SamplerOptions& o) { return o.settings.Get<bool>(kFilesystemEnabled); },
          .add_families = AddFilesystemFamilies,
      });
  return kDescriptor;
}

}  // namespace iowatch::daemon
