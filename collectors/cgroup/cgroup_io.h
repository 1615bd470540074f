// Per-cgroup block I/O, read from whichever hierarchy counts it. Layout:
// where the hierarchies are mounted (<procfs>/self/mountinfo) and which one
// counts I/O: cgroup v2 when the unified root lists the "io" controller in
// cgroup.controllers, else cgroup v1's blkio; v2's io.pressure is read
// wherever a unified mount exists (a hybrid host mirrors its systemd tree
// there). Mount points under /sys are read through the sysfs tree, so
// fixtures hold whole cgroup trees.
//
// A scan walks the hierarchy from its root down to `max_depth` levels (the
// root itself, which is the whole device and already in /proc/diskstats, is
// not reported), keeps the cgroups the filter accepts, and reads each one's
// counters: v2 io.stat and io.pressure; v1 blkio.throttle.io_service_bytes
// and io_serviced, their _recursive variants where the kernel has them, so
// a cgroup counts its descendants in both versions, as v2's io.stat does.
// At most `max_pairs` cgroup x device pairs are kept, in path order; the
// rest are counted, never exported.
// Thread-safety: pure functions of the trees they are given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collectors/cgroup/cgroup_io_stat.h"
#include "collectors/disk/device_filter.h"
#include "collectors/pressure/pressure.h"
#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::collectors {

enum class CgroupVersion { kV1, kV2 };

struct CgroupLayout {
  CgroupVersion version = CgroupVersion::kV2;
  std::string io_root;                  // relative to sysfs: "fs/cgroup", "fs/cgroup/blkio"
  std::optional<std::string> psi_root;  // the unified mount, relative to sysfs
};

// Fails (naming the file) when mountinfo is unreadable or malformed, or no
// hierarchy counting I/O is mounted under /sys.
Result<CgroupLayout> DetectCgroupLayout(const FileTree& procfs, const FileTree& sysfs);

// The cgroup a /proc/PID/cgroup text names in the hierarchy `version`
// counts I/O in ("5:blkio:/a/b" on v1, "0::/a/b" on v2), relative to the
// root: "a/b"; "" at the root or when absent.
std::string CgroupPathIn(std::string_view proc_cgroup, CgroupVersion version);

// The cgroup of systemd's tree (units, slices) a /proc/PID/cgroup text
// names: the unified "0::" line (v2, and hybrid hosts, where systemd mirrors
// its tree there), else v1's "name=systemd" line, else the blkio line.
std::string UnitCgroupPathIn(std::string_view proc_cgroup);

// The calling process's own cgroup in the hierarchy `version` counts I/O
// in, relative to its root, from <procfs>/self/cgroup ("5:blkio:/a/b" on v1,
// "0::/a/b" on v2); "" at the root or when unreadable.
std::string OwnCgroup(const FileTree& procfs, CgroupVersion version);

struct CgroupSelection {
  size_t max_depth = 2;  // 1: system.slice, user.slice; 2: system.slice/postgresql.service
  DeviceFilter filter;   // on the cgroup's path relative to the root
  size_t max_pairs = 2000;
  // Devices reported (empty: all): those of the iostat series, so that a
  // cgroup's I/O on an excluded loop device neither shows nor counts to the cap.
  std::function<bool(uint32_t major, uint32_t minor)> device_wanted;
};

struct CgroupIo {
  std::string path;  // relative to the root: "system.slice/postgresql.service"
  std::string unit;  // UnitOf(path)
  std::vector<CgroupDeviceIo> devices;
  std::optional<Pressure> pressure;  // v2 io.pressure
};

struct CgroupIoScan {
  std::vector<CgroupIo> cgroups;  // sorted by path
  uint64_t dropped_pairs = 0;     // cgroup x device pairs over max_pairs
  std::vector<Error> skipped;     // files that were unreadable or malformed (cgroup skipped)
};

CgroupIoScan ScanCgroupIo(const FileTree& sysfs, const CgroupLayout& layout,
                          const CgroupSelection& selection);

}  // namespace iowatch::collectors
