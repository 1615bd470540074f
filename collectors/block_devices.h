// Discovery of block devices from sysfs (Documentation/ABI/stable/sysfs-block):
// whole disks are the entries of <sysfs>/block, partitions are their
// subdirectories that hold a "partition" file. Attributes that do not change
// while a device exists (identity, md geometry, queue limits) are read here,
// once per discovery, never per sample: reading ~20 sysfs files per device on
// every scrape is what made node_exporter slow on hosts with thousands of
// devices.
// Thread-safety: pure function of the tree it is given.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collectors/file_tree.h"

namespace iowatch::collectors {

struct MdGeometry {
  std::string level;         // md/level, e.g. "raid1"
  uint64_t chunk_bytes = 0;  // md/chunk_size
  uint64_t raid_disks = 0;   // md/raid_disks
};

struct QueueAttributes {
  std::optional<bool> rotational;
  uint64_t logical_block_size = 0;
  uint64_t physical_block_size = 0;
  std::string scheduler;  // the active one, the bracketed entry of queue/scheduler
  uint64_t nr_requests = 0;
  uint64_t max_sectors_kb = 0;
  uint64_t read_ahead_kb = 0;
  uint64_t optimal_io_size = 0;
};

struct BlockDevice {
  std::string name;  // kernel name, as in /proc/diskstats ("sda", "dm-0", "nvme0n1p1")
  uint32_t major = 0;
  uint32_t minor = 0;
  bool is_partition = false;
  std::string parent;     // whole disk of a partition, empty for disks
  std::string stat_path;  // relative to the sysfs root: "block/sda/stat", "block/sda/sda1/stat"
  std::string dm_name;    // dm/name for device-mapper devices ("vg0-root")
  std::optional<MdGeometry> md;  // md arrays only
  QueueAttributes queue;         // for partitions, the parent disk's queue
  std::string model;             // device/model, trimmed
  std::string serial;            // device/serial, trimmed
  std::string wwid;              // wwid or device/wwid
};

// Lists every disk under <sysfs>/block and its partitions, disks sorted by
// name, each disk followed by its partitions. Entries whose "dev" file is
// missing or malformed are still listed with major = minor = 0; a missing
// <sysfs>/block is an error.
Result<std::vector<BlockDevice>> DiscoverBlockDevices(const FileTree& sysfs);

// Names of whole disks and the partitions of each, from sysfs.
struct BlockTopology {
  std::set<std::string> disks;                                 // diskstats names ("cciss/c0d0")
  std::map<std::string, std::vector<std::string>> partitions;  // disk -> its partitions
  std::map<std::string, std::string> dm_names;                 // "dm-0" -> "vg0-root"
};

// Reads only names (block/, partition markers, dm/name): cheap enough to call
// for every sample, so hot-plugged devices are seen.
Result<BlockTopology> ReadBlockTopology(const FileTree& sysfs);

// "[mq-deadline] none" -> "mq-deadline"; "none" -> "none".
std::string ActiveScheduler(std::string_view scheduler_file);

}  // namespace iowatch::collectors
