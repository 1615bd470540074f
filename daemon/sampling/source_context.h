// What every sampling source is given for one sample, and the options they
// share. Each source (disk_source.h, vm_source.h, pressure_source.h,
// cgroup_source.h) owns its own state and touches nothing else, so the
// Sampler can run each on its own BoundedWorker: one stuck read delays
// nothing but its own source.
// Thread-safety: SamplerOptions are immutable once shared; a SourceContext is
// a value the source's job owns.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collectors/bpf/block_io_counters.h"
#include "collectors/disk/block_devices.h"
#include "collectors/disk/device_filter.h"
#include "collectors/filesystem/filesystem_errors.h"
#include "collectors/filesystem/filesystem_mounts.h"
#include "collectors/filesystem/filesystem_usage.h"
#include "collectors/kmsg/kmsg_stream.h"
#include "common/result.h"
#include "config/settings.h"
#include "daemon/sampling/snapshot.h"

namespace iowatch::daemon {

struct CgroupSourceOptions {
  bool enabled = true;
  size_t max_depth = 2;
  collectors::DeviceFilter filter;
  size_t max_pairs = 2000;
};

// The block-layer program (its settings: block_io_source.h).
struct BlockIoSourceOptions {
  // Loads the block-layer program; BlockIoProgram::Load when empty (tests
  // inject a fake).
  std::function<Result<std::unique_ptr<collectors::bpf::BlockIoCounters>>()> load;
};

// The filesystem source's readers (its settings, collectors.filesystem.*:
// filesystem_source.h).
struct FilesystemSourceOptions {
  // statvfs; empty: statfs in helper processes (collectors/filesystem/
  // statfs_helpers.h), so that a call that never returns cannot keep iowatch
  // from exiting. Tests inject another (a fixture's mount points are not this
  // host's).
  collectors::FilesystemUsageReader read_usage;
  // The block device a path names (a btrfs mount's source, which may be a
  // /dev/mapper or /dev/disk/by-id link): stat(2)'s st_rdev when empty.
  collectors::BlockDeviceOfPath device_of;
};

// The kernel log source (collectors/kmsg/): the block layer's I/O errors
// (its switch: kmsg_source.h).
struct KmsgSourceOptions {
  std::string path = "/dev/kmsg";
  // Where the counts and the last record counted are kept across restarts
  // (serve: <state_dir>/kmsg-errors.json); "" keeps nothing.
  std::string state_file;
  bool save = true;  // false: the state file is read, never written (iowatch health)
  // Opens the log; OpenKmsg(path) when empty (tests inject records).
  std::function<Result<std::unique_ptr<collectors::KmsgStream>>()> open;
};

// Device health (collectors/smart/): smartctl per disk (its settings, the
// interval and the timeout: smart_source.h).
struct SmartSourceOptions {
  // The command before "--json=c -x -n standby /dev/DEV"; tests put a script.
  std::vector<std::string> command = {"smartctl"};
};

struct SamplerOptions {
  double interval_seconds = 1;
  double window_seconds = 60;
  collectors::DeviceFilter filter;
  bool partitions = false;      // export partitions too
  CgroupSourceOptions cgroups;  // the block_io source's cgroup selection too
  BlockIoSourceOptions block_io;
  FilesystemSourceOptions filesystems;
  KmsgSourceOptions kmsg;
  SmartSourceOptions smart;
  // How often /proc/PID/io of every process is read (process_source.h); 0: never.
  double process_interval_seconds = 10;
  // The sources' own settings (SourceDescriptor::settings) as the config
  // file set them; a key it does not hold has its row's default.
  config::SettingValues settings;
  // udev's database directory (paths.udev_data, --path.udev.data).
  std::string udev_data = "/run/udev/data";
  uint64_t page_bytes = 4096;
  double user_hz = 100;  // sysconf(_SC_CLK_TCK)
  // How long a sample waits for each source's reads (serve: half the
  // interval); a source that has not answered by then is served from the
  // previous sample, marked failed and timed out. 0: every source is read on
  // the caller's thread, in order, without a deadline (the CLI, and tests
  // whose fake clock must be called in a fixed order).
  double read_deadline_seconds = 0;
  // Monotonic seconds for the collectors' durations; steady_clock when empty.
  // Tests inject a fake so that /metrics is reproducible (inline reads only).
  std::function<double()> monotonic_seconds;
};

struct SourceContext {
  uint64_t tick = 0;            // samples taken, this one included
  uint64_t window_samples = 1;  // the window, in samples
  std::shared_ptr<const SamplerOptions> options;
  std::function<double()> now;  // monotonic seconds
  // The block devices to attribute cgroup I/O to: this sample's when read
  // in order, else the previous sample's.
  std::shared_ptr<const std::vector<collectors::BlockDevice>> devices;
  // When the sampler began this sample and when it stops waiting for its
  // sources (max: it waits for each, read_deadline_seconds 0). A source that
  // bounds its own reads (filesystems' statvfs) plans by these, not by when
  // its own thread happened to start.
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// Malformed lines skipped, per collector, since start.
class ParseErrorCount {
 public:
  // Adds this sample's skipped lines to the collector's total and names the first.
  void Count(const std::vector<Error>& skipped, CollectorStatus& status) {
    totals_[status.name] += skipped.size();
    if (!skipped.empty()) status.parse_error = skipped.front().ToString();
  }
  uint64_t& operator[](const std::string& collector) { return totals_[collector]; }

 private:
  std::map<std::string, uint64_t, std::less<>> totals_;
};

}  // namespace iowatch::daemon
