// The storage stack's states from a sample, read at this moment: each NVMe
// controller's (daemon/sources/nvme/), each ZFS pool's (daemon/sources/zfs/)
// and each dm-multipath map's paths (daemon/sources/udev/), with their
// problems: a controller not "live" does no I/O (resetting, connecting,
// dead, being deleted); a pool not ONLINE is degraded, faulted, suspended…;
// a path whose SCSI state is not "running" carries no I/O (an "unknown"
// one too, as IowatchMultipathPathDown judges it), and a map with one
// running path left is a warning (one more failure and its I/O stops).
// Each problem is the condition a shipped alert fires on, read now.
// `iowatch health` tells a controller on its namespaces' disks, a map on
// its dm device and a pool as a story of its own; the status page tables
// them (daemon/status/storage_rows.h).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "daemon/sampling/snapshot.h"

namespace iowatch::daemon {

struct NvmeControllerHealth {
  std::string name;  // nvme0
  std::string model;
  std::string serial;
  std::string firmware;
  std::string state;                    // "live"; "" when sysfs has no state
  std::vector<std::string> namespaces;  // their block devices: nvme0n1
  std::vector<std::string> problems;
};

struct ZfsPoolHealth {
  std::string name;
  std::string state;  // as the kstat writes it: ONLINE, DEGRADED; "" without a state file
  std::vector<std::string> problems;
};

struct MultipathPathHealth {
  std::string name;   // sdb
  std::string state;  // running, offline, transport-offline, blocked, …, unknown
};

struct MultipathHealth {
  std::string device;  // dm-0
  std::string name;    // mpatha
  std::vector<MultipathPathHealth> paths;
  size_t usable = 0;  // paths running
  std::vector<std::string> warnings;
  std::vector<std::string> problems;
};

// The sample's controllers, pools and maps, in the sources' order (by name).
std::vector<NvmeControllerHealth> BuildNvmeHealth(const Snapshot& s);
std::vector<ZfsPoolHealth> BuildZfsHealth(const Snapshot& s);
std::vector<MultipathHealth> BuildMultipathHealth(const Snapshot& s);

// "Samsung SSD 970 PRO 512GB, firmware 1B2QEXP7, live".
std::string DescribeNvmeController(const NvmeControllerHealth& c);

// "2 of 2 paths usable: sdb running, sdc running".
std::string DescribeMultipath(const MultipathHealth& m);

}  // namespace iowatch::daemon
