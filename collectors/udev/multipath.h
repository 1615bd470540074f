// A dm-multipath map and the state of each of its paths, from sysfs. A
// device-mapper device is a multipath map when udev's DM_UUID for it starts
// with "mpath-" (multipath-tools names every map's uuid so); its paths are
// the devices under <sysfs>/block/<dm>/slaves/, and each path's state is the
// SCSI midlayer's <sysfs>/block/<path>/device/state (drivers/scsi/
// scsi_sysfs.c: running, offline, transport-offline, blocked, quiesce,
// created, cancel, deleted). That is the kernel's view of the path, not
// multipathd's checker verdict (multipath -ll's "active ready"), which
// sysfs does not hold.
// Thread-safety: pure functions of the tree they are given.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::collectors {

struct MultipathPath {
  std::string name;   // sdb: its entry in slaves/
  std::string state;  // device/state trimmed; "unknown" where there is none (not SCSI)
  bool operator==(const MultipathPath&) const = default;
};

struct MultipathMap {
  std::string device;                // dm-0
  std::string name;                  // DM_NAME: mpatha, or the WWID with user_friendly_names off
  std::vector<MultipathPath> paths;  // by name
  bool operator==(const MultipathMap&) const = default;
};

// DM_UUID "mpath-<wwid>".
bool IsMultipathUuid(std::string_view dm_uuid);

// The map whose device is <sysfs>/block/<device> and its paths' states. No
// slaves/ (the map removed) is kNotFound; an unreadable state names its file.
Result<MultipathMap> ReadMultipathMap(const FileTree& sysfs, std::string_view device,
                                      std::string_view name);

}  // namespace iowatch::collectors
