// The one walker of block devices in sysfs (Documentation/ABI/stable/
// sysfs-block): whole disks are the entries of <sysfs>/block, partitions the
// subdirectories of a disk named after it that hold a "partition" file.
// Names are the kernel's, as /proc/diskstats spells them: sysfs writes a '/'
// in a device name as '!' ("cciss!c0d0" is "cciss/c0d0"), and that is
// undone here, once, for every user. Attributes that do not change while a
// device exists (identity, md geometry, queue limits) are read only when
// asked, at discovery, never per sample: reading ~20 sysfs files per device
// on every scrape is what made node_exporter slow on hosts with thousands of
// devices.
// Thread-safety: pure functions of the tree they are given.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/file_tree.h"

namespace iowatch::collectors {

struct MdGeometry {
  std::string level;         // md/level, e.g. "raid1"
  uint64_t chunk_bytes = 0;  // md/chunk_size
  uint64_t raid_disks = 0;   // md/raid_disks (after a reshape in progress: "5 (4)" is 5)
  uint64_t layout = 0;       // md/layout (raid10: near copies in the low byte, far in the next)
};

struct QueueAttributes {
  std::optional<bool> rotational;
  uint64_t logical_block_size = 0;
  uint64_t physical_block_size = 0;
  std::string scheduler;  // the active one, the bracketed entry of queue/scheduler
  uint64_t nr_requests = 0;
  uint64_t max_sectors_kb = 0;
  uint64_t max_hw_sectors_kb = 0;
  uint64_t read_ahead_kb = 0;
  uint64_t minimum_io_size = 0;  // a RAID's chunk where it states one
  uint64_t optimal_io_size = 0;
};

// Something stacked on a disk or one of its partitions: a dm or md device
// listed in holders/, or a loop device whose backing file lives there.
struct Holder {
  std::string partition;  // the partition held (kernel name), empty for the disk itself
  std::string holder;     // kernel name of the holder ("dm-0", "md0", "loop3")
  bool operator==(const Holder&) const = default;
};

struct BlockDevice {
  std::string name;  // kernel name, as in /proc/diskstats ("sda", "dm-0", "cciss/c0d0p1")
  uint32_t major = 0;
  uint32_t minor = 0;
  bool malformed_dev = false;  // "dev" missing or not "major:minor": numbers left at 0
  bool is_partition = false;
  std::string parent;     // whole disk of a partition (kernel name), empty for disks
  std::string stat_path;  // relative to the sysfs root: "block/sda/stat", "block/cciss!c0d0/stat"
  std::string dm_name;    // dm/name for device-mapper devices ("vg0-root")
  // Read with Detail::kAttributes only:
  std::optional<MdGeometry> md;  // md arrays only
  QueueAttributes queue;         // for partitions, the parent disk's queue
  std::string model;             // device/model, trimmed
  std::string serial;            // device/serial, trimmed
  std::string wwid;              // wwid or device/wwid
  std::string wwn;  // from wwid, as lsblk's WWN: "naa.5000c5…" -> "0x5000c5…", eui. kept
  std::string firmware_rev;         // device/firmware_rev (NVMe) or device/rev (SCSI)
  std::string vendor;               // device/vendor, trimmed ("ATA"; virtio's is a PCI id)
  std::string transport;            // nvme scsi virtio mmc loop dm md xen nbd zram ram, "" unknown
  uint64_t size_bytes = 0;          // size × 512 (partitions too)
  uint64_t start_sector = 0;        // partitions: start, in 512-byte sectors
  std::string loop_backing_file;    // loop devices: loop/backing_file
  std::vector<Holder> holders;      // whole disks only, sorted
  std::optional<uint64_t> diskseq;  // whole disks: diskseq (Linux 5.15+)
};

// What tells a device apart from another that later takes its kernel name
// (a disk pulled and another, or the same, pushed in its slot: counters the
// kernel keeps per device start again). diskseq is the kernel's own answer:
// a number no other disk attached since boot has had, the same disk plugged
// again included. Before 5.15 only a different device number, wwid or
// serial tells.
struct DeviceIdentity {
  uint32_t major = 0;
  uint32_t minor = 0;
  std::optional<uint64_t> diskseq;
  std::string wwid;
  std::string serial;
  bool operator==(const DeviceIdentity&) const = default;
};

// A device's identity as discovered (with Detail::kAttributes).
DeviceIdentity DeviceIdentityOf(const BlockDevice& device);

// Whether `a` and `b` are one device: the same numbers, and no diskseq,
// wwid or serial known on both sides that differs (one left unread, by a
// failed discovery or an older kernel, tells nothing).
bool SameDevice(const DeviceIdentity& a, const DeviceIdentity& b);

// <sysfs>/block/<disk>/diskseq of whole disk `device`, read now (for a
// source that must tell a replaced disk between two discoveries); nullopt
// on a kernel without it, for a partition, or when it is unreadable.
std::optional<uint64_t> ReadDiskseq(const FileTree& sysfs, const BlockDevice& device);

// The unit a request must be aligned to and a multiple of to suit the disk:
// optimal_io_size where the disk states one (md's full stripe, a RAID
// controller's), else an md array's chunk, else physical_block_size; 0 when
// none is known (a device read without Detail::kAttributes).
uint64_t AlignmentUnitBytes(const BlockDevice& device);

enum class Detail {
  kNames,       // names, numbers, partitions, dm names: cheap enough for every sample
  kAttributes,  // and identity, md geometry, queue attributes
};

// The device number (makedev) of the filesystem holding a file, nullopt when
// it cannot be stat()ed: how a loop device's backing file is placed.
using DeviceOfFile = std::optional<uint64_t> (*)(const std::string& path);
std::optional<uint64_t> StatDeviceOfFile(const std::string& path);

// Every disk under <sysfs>/block, sorted by sysfs name, each followed by its
// partitions (sorted). A device whose "dev" is missing or malformed is still
// listed, with malformed_dev set. A missing <sysfs>/block is an error. With
// kAttributes, holders/ of each disk and partition, and each loop device's
// backing file placed with `device_of_file` (a host path: the one read
// outside the tree, once per discovery), become the disks' holders.
Result<std::vector<BlockDevice>> DiscoverBlockDevices(
    const FileTree& sysfs, Detail detail = Detail::kAttributes,
    DeviceOfFile device_of_file = StatDeviceOfFile);

// Transport of a device from what sysfs shows: dm/, md/ and loop/
// directories, the bus of device/modalias ("virtio:…", "scsi:…"), else
// the kernel's naming ("nvme0n1", "mmcblk0", "zram0", "xvda").
std::string TransportOf(std::string_view name, bool has_dm, bool has_md, bool has_loop,
                        std::string_view modalias);

std::string WwnOf(std::string_view wwid);

// The whole disk holding device major:minor (a partition's disk, else the
// device itself), with every attribute; nullopt when sysfs has no such
// device. For the probes' target device, its busy tracking and its model.
std::optional<BlockDevice> FindWholeDisk(const FileTree& sysfs, uint32_t major, uint32_t minor);

// The kernel names of device major:minor and of its whole disk (itself when
// it is one), from one walk of sysfs' names; nullopt when sysfs has no such device.
struct DeviceNames {
  std::string name;  // "sda1"
  std::string disk;  // "sda"
};
std::optional<DeviceNames> FindDeviceNames(const FileTree& sysfs, uint32_t major, uint32_t minor);

// Names of whole disks and the partitions of each, as iostat's device
// selection needs them.
struct BlockTopology {
  std::set<std::string> disks;                                 // kernel names ("cciss/c0d0")
  std::map<std::string, std::vector<std::string>> partitions;  // disk -> its partitions
  std::map<std::string, std::string> dm_names;                 // "dm-0" -> "vg0-root"
};

BlockTopology TopologyOf(const std::vector<BlockDevice>& devices);

// DiscoverBlockDevices(kNames) as a topology: cheap enough to call for every
// sample, so hot-plugged devices are seen.
Result<BlockTopology> ReadBlockTopology(const FileTree& sysfs);

// "[mq-deadline] none" -> "mq-deadline"; "none" -> "none".
std::string ActiveScheduler(std::string_view scheduler_file);

}  // namespace iowatch::collectors
