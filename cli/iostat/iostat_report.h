// Which devices an iostat report shows, in which order, and their rows:
// sysstat 12.6's selection rules, as pure functions of two samples and the
// sysfs topology.
//
//  - default: whole disks (entries of <sysfs>/block), sorted by strcmp, devices
//    that never did I/O (reads, writes, discards and flushes all zero) hidden;
//  - device names (or "ALL"): those devices, disks or partitions, sorted by
//    strcmp, never-used ones shown;
//  - "-p dev,...": the devices and their partitions, sorted together;
//  - "-p ALL": every line of /proc/diskstats in file order; a bare "-p" hides
//    never-used devices;
//  - "-z": devices without I/O in the interval are left out.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "collectors/disk/block_devices.h"
#include "collectors/disk/disk_sample.h"
#include "collectors/disk/iostat.h"

namespace iowatch::daemon {

enum class DeviceSet {
  kWholeDisks,         // default, or only names/ALL given
  kPartitionsOfNamed,  // -p dev,...
  kAllLines,           // -p ALL or bare -p: /proc/diskstats order
};

struct IostatSelection {
  DeviceSet set = DeviceSet::kWholeDisks;
  std::vector<std::string> names;  // named devices (kernel or dm names) and -p list
  bool all_keyword = false;        // "ALL" given
  bool hide_never_used = true;     // false when names, ALL or "-p LIST|ALL" given
  bool omit_inactive = false;      // -z
  bool extended = false;           // -x: 4-counter partition lines of old kernels are skipped
};

struct IostatDeviceRow {
  std::string name;  // kernel name
  collectors::IostatRow row;
};

// `prev` is null for the since-boot report.
std::vector<IostatDeviceRow> BuildIostatRows(const collectors::DiskSample* prev,
                                             const collectors::DiskSample& cur,
                                             const collectors::BlockTopology& topology,
                                             const IostatSelection& selection);

}  // namespace iowatch::daemon
