// node_exporter's filesystem families under iowatch_ (same names, labels
// and units, so node-mixin's expressions carry over with the prefix), and
// iowatch_filesystem_info to join a filesystem to its disk.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "daemon/sources/filesystem/filesystem_source.h"

namespace iowatch::daemon {
namespace {

size_t Filesystems(const Snapshot& s) { return s.filesystems.series.size(); }

constexpr char kFilesystemCollector[] = "filesystem";

constexpr FamilyRow<uint64_t collectors::FilesystemUsage::*> kUsageFields[] = {
    {"iowatch_filesystem_size_bytes", "gauge",
     "Filesystem size in bytes (statvfs f_blocks × f_frsize).",
     &collectors::FilesystemUsage::size_bytes},
    {"iowatch_filesystem_free_bytes", "gauge",
     "Filesystem free space in bytes, the space reserved for root included (f_bfree).",
     &collectors::FilesystemUsage::free_bytes},
    {"iowatch_filesystem_avail_bytes", "gauge",
     "Filesystem space available to unprivileged users in bytes (f_bavail).",
     &collectors::FilesystemUsage::avail_bytes},
    {"iowatch_filesystem_files", "gauge", "Filesystem total inodes (f_files).",
     &collectors::FilesystemUsage::files},
    {"iowatch_filesystem_files_free", "gauge", "Filesystem free inodes (f_ffree).",
     &collectors::FilesystemUsage::files_free},
};

void UsageSample(const Snapshot& s, size_t i, size_t arg, ExpositionWriter& w) {
  const FilesystemSeries& f = s.filesystems.series[i];
  if (!f.usage) return;
  w.SampleInt({{"device", f.device}, {"fstype", f.fstype}, {"mountpoint", f.mount_point}},
              (*f.usage).*kUsageFields[arg].value);
}

void Readonly(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const FilesystemSeries& f = s.filesystems.series[i];
  w.SampleInt({{"device", f.device}, {"fstype", f.fstype}, {"mountpoint", f.mount_point}},
              f.readonly ? 1 : 0);
}

void DeviceError(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const FilesystemSeries& f = s.filesystems.series[i];
  w.SampleInt({{"device", f.device}, {"fstype", f.fstype}, {"mountpoint", f.mount_point}},
              f.usage ? 0 : 1);
}

void Info(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const FilesystemSeries& f = s.filesystems.series[i];
  const std::string major = fmt::format("{}", f.major);
  const std::string minor = fmt::format("{}", f.minor);
  w.SampleInt({{"device", f.device},
               {"disk", f.disk},
               {"fstype", f.fstype},
               {"major", major},
               {"minor", minor},
               {"mountpoint", f.mount_point}},
              1);
}

// ext4's errors_count (arg 0), first and last error time (1, 2; 0 when none).
void Ext4Error(const Snapshot& s, size_t i, size_t arg, ExpositionWriter& w) {
  const FilesystemSeries& f = s.filesystems.series[i];
  if (!f.ext4_errors) return;
  const collectors::Ext4Errors& e = *f.ext4_errors;
  const uint64_t value = arg == 0 ? e.count : arg == 1 ? e.first_time : e.last_time;
  w.SampleInt({{"device", f.device}, {"fstype", f.fstype}, {"mountpoint", f.mount_point}}, value);
}

void BtrfsErrors(const Snapshot& s, size_t i, size_t, ExpositionWriter& w) {
  const FilesystemSeries& f = s.filesystems.series[i];
  for (const collectors::BtrfsDeviceErrors& device : f.btrfs_errors) {
    for (size_t type = 0; type < collectors::kBtrfsErrorTypes.size(); ++type) {
      w.SampleInt({{"device", f.device},
                   {"devid", device.devid},
                   {"fstype", f.fstype},
                   {"mountpoint", f.mount_point},
                   {"type", collectors::kBtrfsErrorTypes[type]}},
                  device.counts[type]);
    }
  }
}

void Stuck(const Snapshot& s, size_t, size_t, ExpositionWriter& w) {
  w.SampleInt({}, s.filesystems.stuck);
}

}  // namespace

void AddFilesystemFamilies(TableBuilder& t) {
  AddRowFamilies(t, kUsageFields, Filesystems, UsageSample);
  t.Add("iowatch_filesystem_readonly", "gauge",
        "1 when the filesystem is read-only: its superblock's state (super options ro, or "
        "ext4's emergency_ro), which a remount after errors (errors=remount-ro) sets.",
        {Filesystems, Readonly});
  t.Add("iowatch_filesystem_device_error", "gauge",
        "1 when the filesystem's statvfs failed, has not answered in time (stuck: not asked "
        "again until it does), or its mount is hidden under another; its usage is then absent.",
        {Filesystems, DeviceError});
  t.Add("iowatch_filesystem_info", "gauge",
        "A reported filesystem (always 1): its device number and the whole disk it is on "
        "(disk, the key to iowatch_disk_info's device; empty without a block device).",
        {Filesystems, Info});
  t.Add("iowatch_filesystem_errors_total", "counter",
        "Errors ext4 recorded in its superblock (errors_count in sysfs): since mkfs, across "
        "mounts and reboots.",
        {Filesystems, Ext4Error, 0});
  t.Add("iowatch_filesystem_first_error_time_seconds", "gauge",
        "When ext4 recorded its first error (first_error_time), seconds since the epoch; 0: none.",
        {Filesystems, Ext4Error, 1});
  t.Add("iowatch_filesystem_last_error_time_seconds", "gauge",
        "When ext4 recorded its last error (last_error_time), seconds since the epoch; 0: none.",
        {Filesystems, Ext4Error, 2});
  t.Add("iowatch_filesystem_btrfs_device_errors_total", "counter",
        "Errors btrfs counted on each of its devices (devinfo/<devid>/error_stats), by type: "
        "write, read, flush, corruption, generation; since the last `btrfs device stats -z`.",
        {Filesystems, BtrfsErrors});
  t.Add("iowatch_filesystem_stuck_mounts", "gauge",
        "Mounts whose statvfs has not returned: each keeps one thread until it does.",
        {IfCollectorRan<kFilesystemCollector>, Stuck});
}

}  // namespace iowatch::daemon
