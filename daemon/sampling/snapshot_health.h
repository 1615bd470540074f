// Each whole disk's health from a sample (identity, SMART, the kernel log's
// I/O errors since boot, the filesystems on it) and the probe verdicts of
// its series and of its passive judge, an md array's state (md_health.h),
// an LVM thin pool's mode and fill (thin_pool_health.h), an NVMe
// controller's state, a dm-multipath map's paths and each ZFS pool's state
// (storage_stack_health.h),
// with its problems: the conditions the shipped alerts
// (deploy/prometheus/alerts.yml) fire on, read at this moment, and pending
// or offline-uncorrectable sectors. `iowatch health` prints it (exit 1 on a
// problem); the status page's Health column shows it. A filesystem the
// kernel log says was shut down is a problem of its disk.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectors/disk/block_devices.h"
#include "daemon/sampling/md_health.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/storage_stack_health.h"
#include "daemon/sampling/thin_pool_health.h"

namespace iowatch::daemon {

struct FilesystemHealth {
  std::string mount_point;
  std::string device;  // mountinfo's source
  std::string fstype;
  std::optional<double> used_percent;         // df's Use%: used / (used + avail), rounded up
  std::optional<double> inodes_used_percent;  // none without a fixed inode count (btrfs)
  std::optional<double> avail_percent;        // avail / size, as the alerts compute it
  std::optional<double> inodes_free_percent;
  bool readonly = false;
  bool unreadable = false;  // statvfs failed, did not answer, or the mount is hidden
  uint64_t errors = 0;      // ext4's errors_count; btrfs's device errors, summed
};

struct SmartHealth {
  // "passed", "failed", "health log" (NVMe's log without a verdict),
  // "unavailable" (smartctl gave no health: `detail` says
  // why), "not run" (--no-smart, or still running at the timeout), "none"
  // (dm, md, loop, …: no SMART of its own).
  std::string state;
  std::string detail;
  std::vector<std::pair<std::string, std::string>> facts;  // what matters, in display order
};

struct ProbeSeriesVerdict {
  std::string job;
  std::string device;  // the device the series ran on, "8:0" as the store keeps it
  bool regressed = false;
};

// One passive judge series of a disk (daemon/passive/): its standing
// regression, as the daemon's store or its judge says.
struct PassiveSeriesVerdict {
  std::string device;  // kernel name of the whole disk
  std::string op;
  std::string size;
  std::string source;  // "device" (the BPF device stage) or "diskstats" (await)
  bool regressed = false;
  int64_t since_unix_ms = 0;  // the first bad window's start; 0 when unknown
  double ratio = 0;           // the last judged window's observed over predicted; 0: none
  // While its drift watch holds it raised: its latency over its first day's
  // at the same load (a slow drift the windows' model followed); 0 otherwise.
  double drift_ratio = 0;
};

struct DiskHealth {
  std::string name;
  std::string model;
  std::string serial;
  std::string transport;
  uint64_t size_bytes = 0;
  SmartHealth smart;
  std::vector<IoErrorSeries> io_errors;  // the kernel log's, since boot (buffer errors too)
  std::vector<FilesystemHealth> filesystems;
  std::vector<ProbeSeriesVerdict> probes;
  std::vector<PassiveSeriesVerdict> passive;
  std::optional<MdArrayHealth> md;           // an md array: its state, members and sync
  std::optional<ThinPoolHealth> thin_pool;   // an LVM thin pool: its mode and fill
  std::optional<NvmeControllerHealth> nvme;  // an NVMe namespace's controller (or one of its own)
  std::optional<MultipathHealth> multipath;  // a dm-multipath map: its paths
  std::vector<std::string> problems;
};

struct HostHealth {
  std::vector<DiskHealth> disks;
  std::vector<ZfsPoolHealth> zfs_pools;  // not block devices: stories of their own
  std::vector<std::string> notes;        // sources that could not be read, and why
  size_t Problems() const;
};

// Whether the device can have SMART of its own: a whole disk, not dm, md,
// loop, zram, ram or nbd (their health is their disks').
bool MayHaveSmart(const collectors::BlockDevice& device);

// The health of the snapshot's whole disks (only `only_device` when not
// empty); `smart_ran` is false when SMART is not collected. A regressed
// probe series or passive series is a problem of its disk; an md array's
// problems are its device's, listed after the disks when no block device
// of its name was sampled; a thin pool's likewise (its dm-N, or its pool
// name when sysfs did not name its device); an NVMe controller's on each
// of its namespaces' disks (on a story of its own, by controller name, when
// none was sampled: a dead controller has none); a multipath map's on its
// dm device; a ZFS pool's on itself (`only_device` may name a pool or a
// controller).
HostHealth BuildHostHealth(const Snapshot& s, std::span<const ProbeSeriesVerdict> probes,
                           std::span<const PassiveSeriesVerdict> passive,
                           std::string_view only_device, bool smart_ran);

// "read small (device stage): 1.62× its past since 2026-12-05 07:12 UTC".
std::string DescribePassive(const PassiveSeriesVerdict& v);

// The problems of one disk, by name; none for a name not among them.
const DiskHealth* FindDisk(const HostHealth& health, std::string_view name);

}  // namespace iowatch::daemon
