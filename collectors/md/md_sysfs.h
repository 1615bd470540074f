// An md array's attributes in sysfs (<sysfs>/block/md*/md/, the kernel's
// Documentation/admin-guide/md.rst), read the way drivers/md/md.c prints
// them. Arrays are found from sysfs itself, not from diskstats; a directory
// without md/ (the kernel still creating the array, or not an md device at
// all) is skipped, as prometheus/procfs's sysfs.Mdraids skips it.
// Attributes a level or a kernel does not have (raid0 has no degraded nor
// sync_action; errors is per member and recent) are nullopt, not 0.
// NodeExporterMdSysfsFigures gives what node_exporter's mdadm collector
// exports from them (node_md_degraded, node_md_raid_disks).
// Thread-safety: pure functions of the tree they are given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::collectors {

// md/raid_disks: "4", or "5 (4)" while a reshape changes the count.
struct MdRaidDisks {
  uint64_t count = 0;                        // what the array has (after the reshape)
  std::optional<uint64_t> before_reshape{};  // the count in parentheses
  bool operator==(const MdRaidDisks&) const = default;
};

// md/sync_completed: "none" (no sync runs), "delayed" (waits for another
// array on the same disks), or "<done> / <total>" in 512-byte sectors.
struct MdSyncCompleted {
  enum class Kind { kNone, kDelayed, kRunning };
  Kind kind = Kind::kNone;
  uint64_t done_sectors = 0;
  uint64_t total_sectors = 0;
  bool operator==(const MdSyncCompleted&) const = default;
};

// A member's md/dev-<name>/ directory.
struct MdSysfsMember {
  std::string name{};  // sdc1 (the directory without "dev-")
  // state's comma-separated flags as written: in_sync, faulty, spare,
  // write_mostly, blocked, write_error, want_replacement, replacement,
  // journal...; nullopt when the file is absent.
  std::optional<std::vector<std::string>> state{};
  std::optional<uint64_t> errors{};  // read errors corrected (dev-*/errors)
  bool Has(std::string_view flag) const;
  bool operator==(const MdSysfsMember&) const = default;
};

struct MdSysfsArray {
  std::string name{};                        // md0
  std::optional<std::string> array_state{};  // clear, inactive, clean, active, read-auto...
  std::optional<std::string> level{};        // raid1...; "" for an array without one
  std::optional<MdRaidDisks> raid_disks{};
  std::optional<uint64_t> degraded{};  // raid disks missing or failed
  std::optional<std::string>
      sync_action{};  // idle, resync, recover, check, repair, reshape, frozen
  std::optional<MdSyncCompleted> sync_completed{};
  std::optional<uint64_t> sync_speed_kib_per_s{};  // nullopt also when md.c prints "none"
  std::optional<uint64_t> mismatch_cnt{};          // sectors a check or repair found differing
  std::optional<uint64_t> chunk_size_bytes{};
  std::optional<uint64_t> layout{};      // raid5/6 algorithm; raid10 near/far copies
  std::vector<MdSysfsMember> members{};  // by name
  bool operator==(const MdSysfsArray&) const = default;
};

// One attribute of an md/ directory ("block/md0/md"), trimmed, as valid
// UTF-8 without control characters; nullopt when absent. Other read
// failures are errors naming the path.
Result<std::optional<std::string>> ReadMdSysfsText(const FileTree& sysfs, std::string_view md_dir,
                                                   std::string_view name);

// A decimal attribute; an error naming the path and the expected form when
// it is not one.
Result<std::optional<uint64_t>> ReadMdSysfsNumber(const FileTree& sysfs, std::string_view md_dir,
                                                  std::string_view name);

// md/raid_disks ("4", "5 (4)"); an empty file is absent, as for procfs.
Result<std::optional<MdRaidDisks>> ReadMdRaidDisks(const FileTree& sysfs, std::string_view md_dir);

// The array whose directory is <sysfs>/block/<name>; without md/ (or when
// the array is stopped while read) kNotFound naming md/.
Result<MdSysfsArray> ReadMdSysfsArray(const FileTree& sysfs, std::string_view name);

// Every block/md* holding md/, by name; one stopped while read is left out.
// No block/ is kNotFound; the first array that fails to read otherwise
// fails the whole (its error names the file), as procfs's Mdraids does.
Result<std::vector<MdSysfsArray>> ReadMdSysfsArrays(const FileTree& sysfs);

// One array's node_md_* figures from sysfs, by procfs v0.21.1's rules
// (sysfs/mdraid.go), where procfs reads them and does not fail.
struct NodeMdSysfsFigures {
  // node_md_raid_disks: none (no line) for an array without a level or a
  // container (container, imsm, ddf), or an empty raid_disks.
  std::optional<uint64_t> raid_disks{};
  // node_md_degraded: md/degraded for raid1, 4, 5, 6 and 10; 0 for every
  // other level (raid0, linear, multipath...) without reading the file.
  uint64_t degraded = 0;
};

// Where procfs fails the whole scrape instead (a redundant level without
// degraded, sync_completed "delayed", a missing level, array_state, uuid or
// metadata_version) these are the figures it would have given: degraded 0
// when absent.
NodeMdSysfsFigures NodeExporterMdSysfsFigures(const MdSysfsArray& array);

}  // namespace iowatch::collectors
