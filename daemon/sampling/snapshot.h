// Snapshot: everything one sample produced, immutable once published. The
// sampler builds a new one every interval and swaps it in; scrapes read the
// current one without ever waiting for a sample (or, later, a probe), and a
// scrape in progress keeps the one it started with (shared_ptr). Its
// Prometheus text is rendered by MetricsCursor (metrics_renderer.h), piece by
// piece as a scrape is sent, and not kept.
// Thread-safety: immutable after publication.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "advice/advice.h"
#include "collectors/bpf/block_io_sample.h"
#include "collectors/cgroup/cgroup_io_stat.h"
#include "collectors/disk/block_devices.h"
#include "collectors/disk/diskstats.h"
#include "collectors/filesystem/filesystem_errors.h"
#include "collectors/filesystem/filesystem_usage.h"
#include "collectors/md/md_sysfs.h"
#include "collectors/md/mdstat.h"
#include "collectors/nvme/nvme_class.h"
#include "collectors/pressure/pressure.h"
#include "collectors/smart/smartctl_json.h"
#include "collectors/text/named_values.h"
#include "collectors/thin_pool/thin_pool.h"
#include "collectors/udev/multipath.h"
#include "collectors/udev/udev_data.h"
#include "collectors/vm/meminfo.h"
#include "collectors/vm/proc_stat.h"
#include "collectors/zfs/zfs_pool.h"
#include "common/memo.h"

namespace iowatch::daemon {

struct DeviceSnapshot {
  std::string name;
  collectors::DiskCounters counters;
  bool has_rates = false;          // false for a device's first sample
  bool counters_reset = false;     // the last interval saw counters go backwards
  std::vector<double> latest;      // IostatSeriesTable() order
  std::vector<double> window_max;  // same order
};

struct CollectorStatus {
  std::string name;  // "diskstats", "stat", "meminfo", "vmstat", "sysfs"
  double duration_seconds = 0;
  bool success = false;
  uint64_t parse_errors_total = 0;  // malformed lines skipped since start
  // Why it failed ("path: what: strerror"); on success "" or what was absent
  // and is no failure (a kernel without md has no /proc/mdstat).
  std::string error;
  std::string parse_error;      // the first malformed line of this sample ("path:line: what")
  uint64_t timeouts_total = 0;  // samples it did not answer within the read deadline, since start
};

inline constexpr size_t kPressureResourceCount = std::size(collectors::kPressureResources);

// The host's pressure stall information (/proc/pressure/*).
struct PressureSnapshot {
  // collectors::kPressureResources order; nullopt where the file was unreadable.
  std::optional<collectors::Pressure> resources[kPressureResourceCount];
  // Maximum of avg10 / 100 over the window, [resource][0 = some, 1 = full].
  double avg10_window_max[kPressureResourceCount][2] = {};
};

// Per-cgroup block I/O (daemon/sources/cgroup/cgroup_source.h). Rates in
// kCgroupRates order: read and write bytes/s, read and write requests/s.
inline constexpr size_t kCgroupRateCount = 4;

struct CgroupSeries {
  std::string cgroup;  // relative to the hierarchy's root
  std::string unit;    // systemd unit the path ends in, "" when none
  std::string device;  // kernel name, as iowatch_disk_* label it
  collectors::CgroupDeviceIo counters;
  bool has_rates = false;  // false for a pair's first sample
  std::array<double, kCgroupRateCount> latest{};
  std::array<double, kCgroupRateCount> window_max{};
};

struct CgroupPressureSeries {
  std::string cgroup;
  std::string unit;
  collectors::Pressure pressure;  // v2 io.pressure
};

struct CgroupSnapshot {
  std::vector<CgroupSeries> series;            // by cgroup path, then device
  std::vector<CgroupPressureSeries> pressure;  // by cgroup path
  uint64_t dropped_series = 0;                 // pairs over cgroups.max_series this sample
};

// Per-cgroup I/O from /proc/PID/io (daemon/sources/process_io/process_source.h).
struct ProcessIoSeries {
  std::string cgroup;  // systemd's tree, cut to cgroups.depth
  std::string unit;
  uint64_t read_bytes_total = 0;  // what its surviving processes did since start
  uint64_t write_bytes_total = 0;
  uint64_t cancelled_write_bytes_total = 0;
  bool has_rates = false;
  double read_bytes_per_second = 0;  // over the last reading's interval
  double write_bytes_per_second = 0;
};

struct ProcessIoSnapshot {
  std::vector<ProcessIoSeries> series;  // by cgroup
  uint64_t unreadable = 0;              // processes whose io could not be read
  uint64_t dropped_series = 0;          // cgroups with I/O not kept: over cgroups.max_series
};

// The block_io source's BPF readings (daemon/sources/block_io/block_io_source.h):
// counters since the program was loaded, per whole disk as the iostat series
// name it. Series exist for the (disk, op) pairs the kernel has seen.
struct BlockLatencySeries {
  std::string device;
  collectors::bpf::BlockOp op = collectors::bpf::BlockOp::kRead;
  collectors::bpf::BlockStage stage = collectors::bpf::BlockStage::kTotal;
  uint64_t count = 0;
  uint64_t sum_ns = 0;
  std::array<uint64_t, collectors::bpf::kCoarseSlots> coarse{};  // collectors::bpf::CoarseLeNs
  // From the fine histogram, over the last interval; nullopt without requests.
  std::optional<double> p50_seconds;
  std::optional<double> p99_seconds;
};

struct BlockRequestSeries {
  std::string device;
  collectors::bpf::BlockOp op = collectors::bpf::BlockOp::kRead;
  collectors::bpf::RequestStats stats;
};

// The device stage by request size class (collectors::bpf::SizeClass):
// for the passive judge, which judges each class against itself; not on
// /metrics. The classes' counts add up to the device stage's.
struct BlockClassSeries {
  std::string device;
  collectors::bpf::BlockOp op = collectors::bpf::BlockOp::kRead;
  collectors::bpf::SizeClasses classes{};
};

struct BlockCgroupSeries {
  std::string cgroup;  // relative to the hierarchy's root, as the cgroup series name it
  std::string unit;
  std::string device;
  collectors::bpf::BlockOp op = collectors::bpf::BlockOp::kRead;
  uint64_t bytes = 0;  // the cgroup's and its descendants', gone ones included
  uint64_t requests = 0;
};

// Requests a disk's block layer ended with an error (block_rq_error).
struct BlockErrorSeries {
  std::string device;
  std::string op;     // REQ_OP as the kernel log prints it, lower case
  std::string error;  // its status as the kernel log prints it: "I/O", "timeout", …
  uint64_t requests = 0;
};

struct BlockIoSnapshot {
  std::vector<BlockLatencySeries> latency;       // by device, op, stage
  std::vector<BlockRequestSeries> requests;      // by device, op; flushes have none
  std::vector<BlockClassSeries> device_classes;  // by device, op: where the device stage is
  std::vector<BlockCgroupSeries> cgroups;        // by cgroup, device, op
  std::vector<BlockErrorSeries> errors;          // by device, op, error
  uint64_t cgroup_dropped_series = 0;            // cgroup x device pairs over cgroups.max_series
  // I/O of cgroups removed before iowatch could name them.
  uint64_t unresolved_bytes = 0;
  uint64_t unresolved_requests = 0;
  uint64_t lost_issues = 0;  // collectors::bpf::BlockIoSample's loss counters
  uint64_t lost_series = 0;
  uint64_t lost_cgroups = 0;
  uint64_t lost_flushes = 0;
  uint64_t lost_recursion = 0;
};

// The filesystem source (daemon/sources/filesystem/): one row per
// filesystem (collectors/filesystem/filesystem_mounts.h), in mount table order.
struct FilesystemSeries {
  std::string device;  // mountinfo's source: "/dev/sda1", "tmpfs"
  std::string mount_point;
  std::string fstype;
  uint32_t major = 0;
  uint32_t minor = 0;
  std::string disk;       // the whole disk it lives on (sysfs); "" when none
  bool readonly = false;  // the superblock's "ro" (errors=remount-ro sets it)
  // statvfs's figures; none when it failed, did not answer in time, is
  // still stuck from an earlier sample, or the mount is hidden here.
  std::optional<collectors::FilesystemUsage> usage;
  // The errors the filesystem recorded (collectors/filesystem/filesystem_errors.h):
  // ext4's, and btrfs's per device; none for other types or where sysfs has none.
  std::optional<collectors::Ext4Errors> ext4_errors;
  std::vector<collectors::BtrfsDeviceErrors> btrfs_errors;
};

struct FilesystemSnapshot {
  std::vector<FilesystemSeries> series;
  uint64_t stuck = 0;  // mounts whose statvfs has not returned, not asked again until it does
};

// The kernel log's block I/O errors (daemon/sources/kmsg/), counted since
// boot: kept across daemon restarts in the state directory.
struct IoErrorSeries {
  std::string device;  // as the kernel printed it
  std::string op;
  std::string error;    // blk_status name ("I/O", "critical medium"), "buffer" for the page cache's
  bool buffer = false;  // the page cache's "Buffer I/O error"
  uint64_t count = 0;
  bool operator==(const IoErrorSeries&) const = default;
};

// A filesystem the kernel log says was shut down, since boot.
struct FilesystemShutdownSeries {
  std::string device;  // as the kernel printed it
  std::string fstype;
  uint64_t count = 0;
  bool operator==(const FilesystemShutdownSeries&) const = default;
};

// SCSI commands the kernel log says ended with sense data, since boot.
struct ScsiSenseSeries {
  std::string device;  // the disk as the kernel printed it
  std::string sense_key;
  uint64_t count = 0;
  bool operator==(const ScsiSenseSeries&) const = default;
};

struct KmsgSnapshot {
  std::vector<IoErrorSeries> errors;                // by device, op, error
  std::vector<FilesystemShutdownSeries> shutdowns;  // by device, fstype
  std::vector<ScsiSenseSeries> senses;              // by device, sense key
  uint64_t lost_records = 0;         // overwritten before they were read, since start
  uint64_t suppressed_requests = 0;  // error lines the kernel's rate limit held back, since boot
  uint64_t suppressed_buffers = 0;
};

// Device health from smartctl (daemon/sources/smart/): one entry per disk
// asked, with its last report (kept between reads: every
// collectors.smart.interval) or why there is none.
struct SmartSeries {
  std::string device;  // kernel name
  std::optional<collectors::SmartReport> report;
  std::string error;  // why smartctl gave no health ("" when it did)
};

struct SmartSnapshot {
  std::vector<SmartSeries> devices;  // by device
};

// The SCSI midlayer's command counters per SCSI disk (daemon/sources/scsi/),
// made 64-bit (they wrap at 2^32 in the kernel).
struct ScsiSeries {
  std::string device;
  uint64_t requests = 0;
  uint64_t done = 0;
  uint64_t errors = 0;
  std::optional<uint64_t> timeouts;
};

struct ScsiSnapshot {
  std::vector<ScsiSeries> devices;  // by device
};

// udev's facts of each device (daemon/sources/udev/): node_exporter's
// node_disk_* figures from its database entry.
struct UdevDeviceSeries {
  std::string device;
  collectors::NodeUdevFigures figures;
};

struct UdevSnapshot {
  std::vector<UdevDeviceSeries> devices;  // by device; those with an entry
  // The multipath maps among them (DM_UUID "mpath-…"), their paths' states
  // read this sample.
  std::vector<collectors::MultipathMap> multipath;  // by device
};

// The md RAID arrays (daemon/sources/md/): none on a kernel without md.
struct MdSnapshot {
  std::vector<collectors::MdArray> arrays;             // /proc/mdstat, in its order
  std::vector<collectors::MdSysfsArray> sysfs_arrays;  // <sysfs>/block/md*/md/, by name
};

// The NVMe controllers (daemon/sources/nvme/): none without the nvme driver.
struct NvmeSnapshot {
  std::vector<collectors::NvmeController> controllers;  // <sysfs>/class/nvme/, by name
};

// The ZFS pools (daemon/sources/zfs/): none without the ZFS module.
struct ZfsSnapshot {
  std::vector<collectors::ZfsPool> pools;  // <procfs>/spl/kstat/zfs/*/, by name
};

// The LVM thin pools (daemon/sources/thin_pool/): none without a dm device;
// the last pools dmsetup gave (read every collectors.thin_pool.interval).
struct ThinPoolSnapshot {
  std::vector<collectors::ThinPool> pools;  // in dmsetup status's order
  bool pending = false;  // a reading is under way (the first one's pools are not in yet)
};

struct Snapshot {
  uint64_t sequence = 0;
  double timestamp_seconds = 0;  // wall clock when the sample was taken
  // The monotonic clock then: a sample's age is measured on it, so that a wall
  // clock set forward does not make a fresh sample stale (/healthz 503, the
  // watchdog unfed, systemd restarting the daemon), nor one set back a stale
  // sample fresh.
  double monotonic_seconds = 0;
  double interval_seconds = 1;
  double window_seconds = 60;
  double user_hz = 100;                 // /proc/stat ticks per second
  std::vector<DeviceSnapshot> devices;  // filtered, sorted by name
  // Filtered, sorted by name; never null. Shared with the snapshots before
  // and after: it changes only when devices come and go or filters change.
  std::shared_ptr<const std::vector<collectors::BlockDevice>> block_devices =
      std::make_shared<const std::vector<collectors::BlockDevice>>();
  std::optional<collectors::ProcStat> stat;
  std::optional<collectors::Meminfo> meminfo;
  std::optional<collectors::NamedValues> vmstat;
  bool has_vm_rates = false;
  std::vector<double> vm_latest;  // VmstatSeriesTable() order
  std::vector<double> vm_window_max;
  PressureSnapshot pressure;
  CgroupSnapshot cgroups;
  ProcessIoSnapshot process_io;
  BlockIoSnapshot block_io;
  FilesystemSnapshot filesystems;
  KmsgSnapshot kmsg;
  SmartSnapshot smart;
  ScsiSnapshot scsi;
  MdSnapshot md;
  NvmeSnapshot nvme;
  ZfsSnapshot zfs;
  ThinPoolSnapshot thin_pool;
  UdevSnapshot udev;
  std::vector<CollectorStatus> collectors;
  // `iowatch advise`'s findings for these disks, computed by the first reader
  // (SnapshotAdvice, daemon/sampling/snapshot_advice.h).
  Memo<std::vector<advice::AdviceFinding>> advice;
};

}  // namespace iowatch::daemon
