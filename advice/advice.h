// `iowatch advise`: a device's geometry and settings set against what it
// receives, as findings with their numbers and the change that would help.
// Geometry: md arrays (level, chunk, raid disks → data disks → full stripe;
// raid10 data disks = raid disks / copies from md/layout), else a hardware
// RAID's stated minimum_io_size (chunk) and optimal_io_size (full stripe).
// Observed: the average read and write request size (diskstats, since boot
// or over an interval; the source is named), or, from the block_io source's
// BPF histograms, the share of writes smaller than the full stripe or not
// aligned to it. Findings:
//   full_stripe_over_max_sectors  parity RAID whose full stripe exceeds
//                                 max_sectors_kb: no write can be a
//                                 full-stripe write (Linux's counterpart of
//                                 the 56 KB maxphys of the Solaris RAID-5
//                                 thread)
//   small_writes_on_parity_raid   most writes smaller than the full stripe on
//                                 RAID-4/5/6: read-modify-write
//   partition_misaligned          a partition's start not a multiple of the
//                                 physical block (critical), of the stripe
//                                 unit (warning) or of 1 MiB (info)
//   fs_stripe_mismatch            ext4 stride/stripe_width or XFS sunit/swidth
//                                 absent or other than the array's
//   read_ahead_mismatch           read_ahead_kb far from the average read
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "advice/fs_stripe_hints.h"
#include "collectors/disk/block_devices.h"
#include "collectors/disk/diskstats.h"

namespace iowatch::advice {

struct StripeGeometry {
  std::string source;  // "md raid5", "optimal_io_size"
  uint64_t chunk = 0;  // bytes written to one disk before the next
  uint64_t data_disks = 0;
  uint64_t full_stripe = 0;  // chunk × data disks
  bool parity = false;       // RAID-4/5/6: a partial-stripe write reads to recompute parity
};

// nullopt for a device without a stripe (a plain disk, raid1).
std::optional<StripeGeometry> StripeOf(const collectors::BlockDevice& disk);

struct ObservedSizes {
  std::string source;  // "diskstats since boot", "diskstats over 10 s", "BPF histograms"
  uint64_t reads = 0;
  uint64_t writes = 0;
  double average_read_bytes = 0;
  double average_write_bytes = 0;
  // From the BPF histograms only: the shares of writes below the full stripe
  // and not aligned to it.
  std::optional<double> writes_below_full_stripe;
  std::optional<double> writes_unaligned;
};

// The counts and average sizes of the requests between two readings of a
// disk's counters (`before` all zero: since boot).
ObservedSizes ObserveSizes(const collectors::DiskCounters& before,
                           const collectors::DiskCounters& after, std::string source);

struct PartitionFacts {
  collectors::BlockDevice partition;  // start_sector set
  std::optional<FsStripeHints> filesystem;
};

struct DeviceFacts {
  collectors::BlockDevice disk;             // with attributes (md, queue)
  std::optional<FsStripeHints> filesystem;  // on the whole disk
  std::vector<PartitionFacts> partitions;
  ObservedSizes observed;
};

enum class Severity { kInfo, kWarning, kCritical };
std::string_view ToString(Severity severity);

struct AdviceFinding {
  std::string device;   // the disk or partition it concerns
  std::string finding;  // one of the names above
  Severity severity = Severity::kInfo;
  std::string text;        // what holds, with its numbers
  std::string suggestion;  // the change, as a command where there is one
};

std::vector<AdviceFinding> Advise(const DeviceFacts& facts);

}  // namespace iowatch::advice
