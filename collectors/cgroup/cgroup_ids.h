// Cgroups by id. The block layer's BPF program keys each request by the id
// of its blkcg's cgroup: the kernfs node id, which readdir and stat report as
// the cgroup directory's inode number (64-bit kernels). This names those ids
// with paths relative to the hierarchy's root, as the cgroup source (from the
// cgroup files) labels its series.
// Thread-safety: pure functions of the tree they are given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "collectors/cgroup/cgroup_io.h"
#include "common/file_tree.h"
#include "common/result.h"

namespace iowatch::collectors {

struct CgroupIds {
  std::unordered_map<uint64_t, std::string> paths;  // id -> "system.slice/x.service", root ""
  bool truncated = false;                           // more than max_cgroups: the rest unnamed
};

// Every cgroup of the hierarchy counting I/O, at any depth, up to
// `max_cgroups`. Fails only when the root itself cannot be read; a cgroup
// removed during the walk is left out.
Result<CgroupIds> ScanCgroupIds(const FileTree& sysfs, const CgroupLayout& layout,
                                size_t max_cgroups = 200000);

}  // namespace iowatch::collectors
