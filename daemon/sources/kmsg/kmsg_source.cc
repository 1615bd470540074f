#include "daemon/sources/kmsg/kmsg_source.h"

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "collectors/kmsg/kmsg_record.h"
#include "collectors/kmsg/kmsg_stream.h"
#include "common/whole_file.h"
#include "daemon/sources/kmsg/kmsg_counts.h"

namespace iowatch::daemon {
namespace {

// Records read in one sample at most: a storm is read over several samples
// rather than holding one past its deadline.
constexpr size_t kMaxRecordsPerSample = 100'000;

Result<std::unique_ptr<collectors::KmsgStream>> OpenLog(const KmsgSourceOptions& options) {
  return options.open ? options.open() : collectors::OpenKmsg(options.path);
}

class KmsgSource final : public SampleSource {
 public:
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  // This boot's counts from the state file, once (another boot's are not ours).
  void Resume(const FileTree& procfs, const KmsgSourceOptions& options);
  // Reads what is new; false, with the error in `status`, when the log fails.
  bool ReadNew(const KmsgSourceOptions& options, const FileTree& sysfs, CollectorStatus& status);
  // One record: counted when it is an I/O error newer than those counted, of
  // a device that exists.
  void Count(const collectors::KmsgRecord& record, const FileTree& sysfs);
  // The state file is not to be trusted (`what`): counting starts afresh for
  // this boot, the file kept aside as .bad where the daemon writes it.
  void Distrust(const KmsgSourceOptions& options, const std::string& what);
  // At the end of the log: false, the counts dropped, when the saved
  // sequence is above the newest record's (one the kernel never printed,
  // which would keep every later record from being counted).
  bool SavedSequenceSeen(const KmsgSourceOptions& options);

  bool resumed_ = false;
  KmsgCounts counts_;
  std::unique_ptr<collectors::KmsgStream> stream_;
  std::optional<uint64_t> last_read_;  // sequence of the last record read
  uint64_t lost_ = 0;
  uint64_t malformed_ = 0;
  bool changed_ = false;  // counts to save
  // The saved sequence until a record at or above it is read (one the log
  // holds or held); still there at the end of the log, it was never printed.
  std::optional<uint64_t> unseen_saved_sequence_;
  std::string warning_;  // about the state file, for this sample's status
};

void KmsgSource::Resume(const FileTree& procfs, const KmsgSourceOptions& options) {
  resumed_ = true;
  auto boot_id = procfs.Read("sys/kernel/random/boot_id");
  if (boot_id) {
    counts_.boot_id = *boot_id;
    while (!counts_.boot_id.empty() && counts_.boot_id.back() == '\n') counts_.boot_id.pop_back();
  }
  if (options.state_file.empty() || counts_.boot_id.empty()) return;
  auto saved = ReadKmsgCounts(options.state_file);
  if (!saved) {
    if (saved.error().code != ErrorCode::kNotFound) Distrust(options, saved.error().ToString());
    return;
  }
  if (saved->boot_id != counts_.boot_id) return;  // another boot's
  counts_ = std::move(*saved);
  unseen_saved_sequence_ = counts_.sequence;
}

void KmsgSource::Distrust(const KmsgSourceOptions& options, const std::string& what) {
  std::string boot_id = std::move(counts_.boot_id);
  counts_ = KmsgCounts();
  counts_.boot_id = std::move(boot_id);
  unseen_saved_sequence_.reset();
  changed_ = true;  // what the log says replaces it
  ++malformed_;
  warning_ = what + "; counting this boot's records again from the kernel log";
  if (!options.save) return;
  const std::string aside = options.state_file + ".bad";
  // rename(2) moves a symlink or a FIFO itself, never what it names.
  if (std::rename(options.state_file.c_str(), aside.c_str()) == 0) {
    warning_ += ", the file kept as " + aside;
  }
}

bool KmsgSource::SavedSequenceSeen(const KmsgSourceOptions& options) {
  if (!unseen_saved_sequence_) return true;
  Distrust(options, fmt::format("{}: \"sequence\" {} is above the kernel log's newest record ({})",
                                options.state_file, *unseen_saved_sequence_,
                                last_read_ ? std::to_string(*last_read_) : "none"));
  return false;
}

void KmsgSource::Count(const collectors::KmsgRecord& record, const FileTree& sysfs) {
  if (last_read_ && record.sequence > *last_read_ + 1) lost_ += record.sequence - *last_read_ - 1;
  last_read_ = record.sequence;
  if (unseen_saved_sequence_ && record.sequence >= *unseen_saved_sequence_) {
    unseen_saved_sequence_.reset();
  }
  if (counts_.sequence && record.sequence <= *counts_.sequence) return;  // counted before
  // The kernel's own (facility 0): root can write any text to /dev/kmsg as facility user.
  if (record.priority >> 3 != 0) return;
  // A line naming no device there is (a forgery the parsers let through, or
  // a disk gone before the line was read) makes no series.
  const auto exists = [&](const std::string& device) {
    return collectors::KernelDiskExists(sysfs, device);
  };
  if (const auto error = collectors::ParseBlockIoError(record.text)) {
    if (!exists(error->device)) return;
    counts_.Add(error->device, error->op, error->error, error->buffer);
  } else if (const auto shutdown = collectors::ParseFilesystemShutdown(record.text)) {
    if (!exists(shutdown->device)) return;
    counts_.AddShutdown(shutdown->device, shutdown->fstype);
  } else if (const auto sense = collectors::ParseScsiSense(record.text)) {
    if (!exists(sense->device)) return;
    counts_.AddSense(sense->device, sense->sense_key);
  } else if (const auto held = collectors::ParseSuppressedIoErrors(record.text)) {
    (held->buffer ? counts_.suppressed_buffers : counts_.suppressed_requests) += held->count;
  } else {
    return;
  }
  counts_.sequence = record.sequence;
  changed_ = true;
}

bool KmsgSource::ReadNew(const KmsgSourceOptions& options, const FileTree& sysfs,
                         CollectorStatus& status) {
  if (!stream_) {
    auto opened = OpenLog(options);
    if (!opened) {
      status.error = opened.error().ToString();
      return false;
    }
    stream_ = std::move(*opened);
  }
  for (size_t n = 0; n < kMaxRecordsPerSample; ++n) {
    auto read = stream_->Next();
    if (!read) {
      status.error = read.error().ToString();
      stream_.reset();  // opened again next sample
      return false;
    }
    if (read->overrun) continue;  // the sequence numbers say how many were lost
    if (!read->record) {          // caught up
      if (SavedSequenceSeen(options)) break;
      stream_.reset();  // the records skipped as counted before: read again, from the first
      last_read_.reset();
      return ReadNew(options, sysfs, status);
    }
    const auto record = collectors::ParseKmsgRecord(*read->record);
    if (!record) {
      ++malformed_;
      if (status.parse_error.empty()) {
        status.parse_error = options.path + ": expected 'PRIO,SEQ,USEC,FLAGS;TEXT', found '" +
                             read->record->substr(0, 80) + "'";
      }
      continue;
    }
    Count(*record, sysfs);
  }
  return true;
}

void KmsgSource::Collect(const FileTree& procfs, const FileTree& sysfs,
                         const SourceContext& context, Snapshot& out) {
  const KmsgSourceOptions& options = context.options->kmsg;
  if (!context.options->settings.Get<bool>(kKmsgEnabled)) return;
  const double start = context.now();
  CollectorStatus status{"kmsg", 0, false, 0, {}, {}};
  if (!resumed_) Resume(procfs, options);
  status.success = ReadNew(options, sysfs, status);
  if (!warning_.empty()) status.parse_error = std::exchange(warning_, {});
  if (changed_ && options.save && !options.state_file.empty()) {
    // Unsaved counts are saved with the next error; a restart before then
    // counts those records again, from the log, once. The file is replaced,
    // never written through (a symlink to a disk, a FIFO).
    if (WriteWholeFile(options.state_file, KmsgCountsJson(counts_), {.replace_only = true})) {
      changed_ = false;
    }
  }
  out.kmsg.errors = counts_.errors;
  out.kmsg.shutdowns = counts_.shutdowns;
  out.kmsg.senses = counts_.senses;
  out.kmsg.lost_records = lost_;
  out.kmsg.suppressed_requests = counts_.suppressed_requests;
  out.kmsg.suppressed_buffers = counts_.suppressed_buffers;
  status.parse_errors_total = malformed_;
  status.duration_seconds = context.now() - start;
  out.collectors.push_back(std::move(status));
}

constexpr config::Setting kKmsgSettings[] = {kKmsgEnabled};

}  // namespace

const SourceDescriptor& KmsgSourceDescriptor() {
  static constexpr std::string_view kCollectors[] = {"kmsg"};
  static constexpr SourceDescriptor kDescriptor = Registered<KmsgSource, &Snapshot::kmsg>({
      .name = "kmsg",
      .reads = "/dev/kmsg: the kernel log's block I/O errors, filesystem shutdowns and SCSI sense",
      .collectors = kCollectors,
      .config_switch = kKmsgEnabled.key,
      .settings = kKmsgSettings,
      .enabled = [](const SamplerOptions& o) { return o.settings.Get<bool>(kKmsgEnabled); },
      .add_families = AddKmsgFamilies,
      .cannot_run_here = [](const SamplerOptions& o) -> std::optional<std::string> {
        auto opened = OpenLog(o.kmsg);
        if (opened) return std::nullopt;
        return opened.error().ToString();
      },
  });
  return kDescriptor;
}

}  // namespace iowatch::daemon
