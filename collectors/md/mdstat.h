// Parser for /proc/mdstat, the md RAID arrays' status (drivers/md/md.c:
// md_seq_show, status_resync), e.g.
//   md6 : active raid1 sdb2[2](F) sdc[1](S) sda2[0]
//         195310144 blocks [2/1] [U_]
//         [=>....]  recovery =  8.5% (16775552/195310144) finish=17.0min speed=259783K/sec
// An array is its header line ("<name> : active|inactive ..."), then indented
// lines: the status line (blocks, superblock, the personality's own figures),
// then a sync line or resync=DELAYED|PENDING|REMOTE, then others (bitmap:),
// which are ignored. NodeExporterMdFigures gives what node_exporter's mdadm
// collector (prometheus/procfs mdstat.go) exports for an array.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_names.h"
#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::collectors {

// A component device: "sdc1[1](F)".
struct MdMember {
  std::string name{};         // sdc1
  uint32_t role = 0;          // desc_nr: its slot in the superblock
  bool failed = false;        // (F)
  bool spare = false;         // (S): no raid_disk
  bool write_mostly = false;  // (W)
  bool journal = false;       // (J)
  bool replacement = false;   // (R)
  bool operator==(const MdMember&) const = default;
};

// The word md.c prints before " =" on the sync line. Released kernels print
// "resync" while a requested repair runs (only sysfs sync_action says
// "repair"); an RFC patch (linux-raid, December 2025: "md: simplify sync
// action print in status_resync") prints md_sync_action_name(), "repair".
enum class MdSyncAction { kResync, kRecovery, kCheck, kRepair, kReshape };
inline constexpr EnumName<MdSyncAction> kMdSyncActionNames[] = {
    {MdSyncAction::kResync, "resync"},
    {MdSyncAction::kRecovery, "recovery"},
    {MdSyncAction::kCheck, "check"},
    {MdSyncAction::kRepair, "repair"},
    {MdSyncAction::kReshape, "reshape"}};
static_assert(NamesEveryValue<kMdSyncActionNames>());

// "[=>....]  recovery =  8.5% (16775552/195310144) finish=17.0min speed=259783K/sec"
struct MdSync {
  MdSyncAction action = MdSyncAction::kResync;
  double percent = 0;         // one decimal, as printed
  uint64_t done_blocks = 0;   // 1 KiB blocks
  uint64_t total_blocks = 0;  // 1 KiB blocks
  double finish_minutes = 0;
  uint64_t speed_kib_per_s = 0;
  bool operator==(const MdSync&) const = default;
};

// A sync waiting to start: "resync=DELAYED" (another array on the same disks
// syncs first), "resync=PENDING" (the array is auto-read-only), or
// "resync=REMOTE" (clustered md: another node syncs).
enum class MdSyncWait { kDelayed, kPending, kRemote };
inline constexpr EnumName<MdSyncWait> kMdSyncWaitNames[] = {{MdSyncWait::kDelayed, "DELAYED"},
                                                            {MdSyncWait::kPending, "PENDING"},
                                                            {MdSyncWait::kRemote, "REMOTE"}};
static_assert(NamesEveryValue<kMdSyncWaitNames>());

enum class MdReadOnly { kNo, kReadOnly, kAutoReadOnly };

struct MdArray {
  std::string name{};  // md3
  bool active = false;
  MdReadOnly read_only = MdReadOnly::kNo;
  std::string level{};  // raid1, raid6, raid0, linear, multipath...; "" when none
  std::vector<MdMember> members{};
  std::optional<uint64_t> blocks{};         // 1 KiB blocks; none for an array without disks
  std::optional<uint32_t> raid_disks{};     // n of [n/m]: the disks the level needs
  std::optional<uint32_t> in_sync_disks{};  // m of [n/m]
  std::string disk_map{};                   // "U_UU" of [U_UU], "" when absent
  std::optional<uint32_t> chunk_kib{};      // "64k chunk", "512k chunks", "512K chunks"
  std::optional<MdSync> sync{};
  std::optional<MdSyncWait> sync_wait{};
  bool operator==(const MdArray&) const = default;
};

// Fails (with path:line and what was expected) on a malformed header, status
// or sync line; unknown lines are ignored. No arrays is no error.
Result<std::vector<MdArray>> ParseMdstat(std::string_view text, std::string_view path);

// <procfs>/mdstat read and parsed; a kernel without md has no such file
// (kNotFound).
Result<std::vector<MdArray>> ReadMdstat(const FileTree& procfs);

// node_md_state's labels, in node_exporter's order.
inline constexpr std::string_view kNodeMdStates[] = {"active", "inactive", "recovering", "resync",
                                                     "check"};

// One array's node_md_* figures from mdstat, by procfs's rules (mdstat.go).
struct NodeMdFigures {
  // One of kNodeMdStates, or none while reshaping: procfs says "reshaping",
  // which node_exporter has no label for, so all five are 0.
  std::optional<std::string_view> state{};
  uint64_t disks_active = 0;
  uint64_t disks_failed = 0;
  uint64_t disks_spare = 0;
  uint64_t disks_required = 0;
  uint64_t blocks = 0;
  uint64_t blocks_synced = 0;
  // node_md_state{state=...}: 1 for the array's state, 0 for the others.
  double StateValue(std::string_view label) const { return state == label ? 1 : 0; }
};

// Where procfs fails the whole file instead (resync=REMOTE, an array without
// a status line, an active non-raid0 array without [n/m]) the missing
// figures are 0.
NodeMdFigures NodeExporterMdFigures(const MdArray& array);

}  // namespace iowatch::collectors
