#include "daemon/sources/filesystem/filesystem_source.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectors/filesystem/filesystem_errors.h"
#include "collectors/filesystem/filesystem_mounts.h"
#include "collectors/filesystem/mount_table_watch.h"
#include "collectors/filesystem/statfs_helpers.h"
#include "daemon/sampling/bounded_worker.h"
#include "daemon/sources/filesystem/mount_table.h"
#include "daemon/sources/filesystem/usage_asker.h"

namespace iowatch::daemon {
namespace {

using steady = std::chrono::steady_clock;

constexpr config::Setting kFilesystemSettings[] = {kFilesystemEnabled,  kFsTypesInclude,
                                                   kFsTypesExclude,     kMountPointsInclude,
                                                   kMountPointsExclude, kMountTimeout};

class FilesystemSource final : public SampleSource {
 public:
  FilesystemSource() { builder_.SetName("mount-table"); }
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  using Selected = std::vector<collectors::FilesystemMount>;
  // What a filesystem keeps between samples: its last figures (a sample
  // that runs out of time before its turn reports them again), and what was
  // looked up once when it appeared.
  struct Known {
    std::optional<collectors::FilesystemUsage> usage;
    std::optional<std::string> btrfs_fsid;  // none: not btrfs, or no fsid lists its device
    std::optional<uint64_t> errors;         // the error counters' sum when last read
  };

  // The table in use and what each of its filesystems keeps (in the
  // selection's order).
  struct Table {
    std::shared_ptr<const MountTable> built;  // shared with a build, which compares with it
    std::vector<Known> known;
  };

  // Brings the table up to date: a build starts when the watch or an error
  // counter says the table may have changed (or the options did), and one
  // that finishes within a tenth of the sample is taken in it; one that does
  // not is taken by a later sample, this one keeping the table it has. The
  // first table is waited for as long as the sample allows. Fails while the
  // last build failed (mountinfo unreadable, a filter that does not compile).
  Status RefreshTable(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context);
  // Starts a build of the table on the builder's thread.
  void StartBuild(const FileTree& procfs, const FileTree& sysfs,
                  const std::shared_ptr<const SamplerOptions>& options);
  // Takes a finished build: a new table, each filesystem still mounted
  // keeping what it knew; or its failure.
  void TakeBuild(MountTableBuild build);
  // The errors the filesystem keeps in sysfs, where its type keeps any. A
  // count that moved reads the table again next sample: the error may have
  // turned the filesystem read-only, which no mount event announces.
  void ReadErrors(const FileTree& sysfs, const collectors::Mount& mount, Known& known,
                  FilesystemSeries& series);
  // statvfs of the reachable mounts, from where the last sample stopped, until
  // the deadline; each mount's figures into `known` (kept when not reached).
  void AskUsage(const Selected& selected, std::vector<Known>& known, const SourceContext& context);
  // How long one mount may take (mount_timeout).
  static steady::duration MountTimeout(const SamplerOptions& options);
  // The point `percent` % of the way from the sample's start to the
  // sampler's deadline (max when the sampler waits for every source).
  static steady::time_point PartOfSample(const SourceContext& context, int percent);

  UsageAsker asker_;
  collectors::MountTableWatch watch_;
  bool read_again_ = false;  // the next sample builds the table whatever the watch says
  // statfs in helper processes (the options' reader when it is empty).
  collectors::FilesystemUsageBatchReader helper_reader_ =
      collectors::HelperUsageReader(std::make_shared<collectors::StatfsHelpers>());
  DeviceNameCache names_;
  std::optional<Table> table_;
  std::optional<Error> failed_;  // the last build's failure, until a build succeeds
  BoundedWorker builder_;
  // The running build's result, written by its job (null: none running).
  std::shared_ptr<MountTableBuild> building_;
  size_t next_ = 0;  // the position in the selection the next sample asks first
  uint64_t skipped_total_ = 0;
  KeptFiles kept_;  // each ext4 filesystem's error counts in sysfs
};

void FilesystemSource::ReadErrors(const FileTree& sysfs, const collectors::Mount& mount,
                                  Known& known, FilesystemSeries& series) {
  std::optional<uint64_t> errors;
  if (mount.fstype == "ext4") {
    const collectors::DeviceNames& names = names_.Of(sysfs, mount.major, mount.minor);
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

steady::time_point FilesystemSource::PartOfSample(const SourceContext& context, int percent) {
  if (context.deadline == steady::time_point::max()) return context.deadline;
  return context.started + (context.deadline - context.started) * percent / 100;
}

void FilesystemSource::AskUsage(const Selected& selected, std::vector<Known>& known,
                                const SourceContext& context) {
  const FilesystemSourceOptions& options = context.options->filesystems;
  const auto& read = options.read_usage ? collectors::OneByOne(options.read_usage) : helper_reader_;
  const size_t count = selected.size();
  const size_t first = count == 0 ? 0 : next_ % count;
  // Asked until 60 % of the sample: the rest is the sample's series for every
  // mount (tens of thousands on a container host), and a busy VM's stalls
  // (tens of ms) must not push them past the deadline.
  const steady::time_point deadline = PartOfSample(context, 60);
  if (steady::now() >= deadline) return;  // no time left: the next sample starts at `first`
  // From where the last sample stopped; a mount hidden under another here
  // is not asked (what covers it would answer).
  std::vector<size_t> order;
  std::vector<UsageAsker::Request> requests;
  order.reserve(count);
  requests.reserve(count);
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
  const std::vector<UsageAsker::Answer> answers =
      asker_.AskAll(read, requests, MountTimeout(*context.options), deadline);
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

void FilesystemSource::StartBuild(const FileTree& procfs, const FileTree& sysfs,
                                  const std::shared_ptr<const SamplerOptions>& options) {
  MountTableInputs inputs{.procfs = procfs,
                          .sysfs = sysfs,
                          .options = options,
                          .in_use = table_ ? table_->built : nullptr,
                          .names = names_};
  auto result = std::make_shared<MountTableBuild>();
  // The job owns its inputs and result: the source may be gone when it ends.
  if (builder_.Start([inputs = std::move(inputs), result]() mutable {
        *result = BuildMountTable(std::move(inputs));
      })) {
    building_ = std::move(result);
  }
}

void FilesystemSource::TakeBuild(MountTableBuild build) {
  names_ = std::move(build.names);
  if (!build.table) {
    failed_ = std::move(build.table).error();
    read_again_ = true;  // read again next sample: the watch has reported its change
    return;
  }
  failed_.reset();
  if (!*build.table) return;  // the table in use
  MountTable& built = **build.table;
  std::vector<Known> known;
  known.reserve(built.selected.size());
  for (size_t i = 0; i < built.selected.size(); ++i) {
    const size_t before = built.before[i];
    known.push_back(before != MountTable::kNew
                        ? std::move(table_->known[before])
                        : Known{.usage = std::nullopt,
                                .btrfs_fsid = std::move(built.btrfs_fsids[i]),
                                .errors = std::nullopt});
  }
  table_ = Table{.built = std::make_shared<const MountTable>(std::move(built)),
                 .known = std::move(known)};
}

Status FilesystemSource::RefreshTable(const FileTree& procfs, const FileTree& sysfs,
                                      const SourceContext& context) {
  const bool changed = watch_.Changed(procfs.PathOf(kMountinfoRelative)) || read_again_ ||
                       !table_ || table_->built->options != context.options;
  if (changed && !building_) {
    read_again_ = false;
    StartBuild(procfs, sysfs, context.options);
  } else if (changed) {
    read_again_ = true;  // the running build may have read the table before the change
  }
  // A build is waited for a tenth of the sample (hundreds of mounts take
  // milliseconds); a longer one is taken at the start of a later sample, so
  // that taking it never runs past the sample's end. A sample without a
  // table waits for its first as long as it may ask.
  if (building_ && builder_.WaitUntil(PartOfSample(context, table_ ? 10 : 80))) {
    TakeBuild(std::move(*std::exchange(building_, nullptr)));
  }
  if (failed_) return std::unexpected(*failed_);
  if (!table_) return std::unexpected(Error::Io("the mount table is still being read", ""));
  return {};
}

void FilesystemSource::Collect(const FileTree& procfs, const FileTree& sysfs,
                               const SourceContext& context, Snapshot& out) {
  if (!context.options->settings.Get<bool>(kFilesystemEnabled)) return;
  const double start = context.now();
  CollectorStatus status{"filesystem", 0, false, 0, {}, {}};
  if (const Status refreshed = RefreshTable(procfs, sysfs, context); !refreshed) {
    status.error = refreshed.error().ToString();
  } else {
    Table& table = *table_;
    const std::vector<collectors::FilesystemMount>& selected = table.built->selected;
    skipped_total_ += table.built->skipped.size();
    if (!table.built->skipped.empty()) status.parse_error = table.built->skipped.front().ToString();
    out.filesystems.series = table.built->described;
    const FileTree kept_sysfs = sysfs.Keeping(kept_);
    for (size_t i = 0; i < selected.size(); ++i) {
      ReadErrors(kept_sysfs, selected[i].mount, table.known[i], out.filesystems.series[i]);
    }
    kept_.Sweep();  // the filesystems unmounted
    AskUsage(selected, table.known, context);
    for (size_t i = 0; i < selected.size(); ++i) {
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
