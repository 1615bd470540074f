// Each md RAID array's health from a sample: its state, its members, a
// running sync and its problems, the conditions the md alerts
// (deploy/prometheus/alerts.yml, iowatch-md) fire on, read at this moment:
// degraded, a member marked failed, inactive (an IMSM or DDF container,
// always inactive, is not). /proc/mdstat and the arrays' sysfs attributes
// are joined by name; an array in only one of them is judged on what it has.
// `iowatch health` and the status page show it.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "daemon/sampling/snapshot.h"

namespace iowatch::daemon {

// A resync, recovery, check, repair or reshape running, from mdstat's line.
struct MdSyncHealth {
  std::string action;  // as mdstat prints it: resync, recovery, check, repair, reshape
  double done_ratio = 0;
  double remaining_seconds = 0;  // the kernel's finish= estimate
  uint64_t speed_bytes_per_second = 0;
};

struct MdArrayHealth {
  std::string name;         // md6
  std::string level;        // raid1, raid6...; "" when neither source says
  uint64_t size_bytes = 0;  // mdstat's blocks
  bool active = false;
  std::string array_state;  // md/array_state (clean, active, read-auto...), "" when absent
  uint64_t raid_disks = 0;  // the disks the level needs (mdstat's n of [n/m], or md/raid_disks)
  uint64_t degraded = 0;    // raid disks missing or failed
  std::vector<std::string> members;  // in mdstat's order, "(failed)" or "(spare)" after a name
  std::vector<std::string> failed;   // members marked (F)
  std::optional<MdSyncHealth> sync;
  bool container = false;    // an IMSM or DDF container (md/level ""): inactive by nature
  std::string sync_waiting;  // DELAYED, PENDING or REMOTE (mdstat's resync=…), "" otherwise
  std::vector<std::string> problems;
};

// The sample's arrays, by name.
std::vector<MdArrayHealth> BuildMdHealth(const Snapshot& s);

// "active, degraded: 1 of 2 raid disks missing or failed" — one line of state.
std::string DescribeMdState(const MdArrayHealth& array);

// "recovery 8.6 % done, 17 min left at 253.7 MiB/s"; "" when no sync runs
// ("resync=DELAYED" while one waits).
std::string DescribeMdSync(const MdArrayHealth& array);

}  // namespace iowatch::daemon
