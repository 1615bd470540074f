// BlockIoCgroups: the BPF program's per-cgroup counters as the series of the
// cgroup source: named by path, summed into each selected ancestor
// (a cgroup counts its descendants, as io.stat and v1's _recursive files
// do), within cgroups.depth, include/exclude and max_series.
//
// The program keys requests by cgroup id; ids are named by a walk of the
// hierarchy (collectors/cgroup/cgroup_ids.h) when an unknown one appears,
// and every kRescanSamples samples to see which cgroups are gone. A gone
// cgroup's counts are folded into totals kept here, under its path cut to
// the depth, and its entries deleted from the kernel's map (which would
// otherwise fill on a host that makes a cgroup per job): its ancestors'
// counters never go backwards, and its own series ends. A cgroup created and removed between two
// walks cannot be named: its I/O is counted as unresolved.
// Thread-safety: not thread-safe; the BPF source's worker only.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "collectors/bpf/block_io_sample.h"
#include "collectors/cgroup/cgroup_io.h"
#include "common/file_tree.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"

namespace iowatch::daemon {

class BlockIoCgroups {
 public:
  static constexpr uint64_t kRescanSamples = 30;

  // Fills out.cgroups, cgroup_dropped_series and unresolved_*; returns the
  // ids whose kernel entries are to be deleted (their counts now kept here).
  // `device_names` maps the program's disk numbers (KernelDev) to the
  // wanted disks' names.
  std::vector<uint64_t> Update(const FileTree& sysfs, const collectors::CgroupLayout& layout,
                               const collectors::bpf::BlockIoSample& sample,
                               const std::unordered_map<uint32_t, std::string>& device_names,
                               const CgroupSourceOptions& options, uint64_t tick,
                               BlockIoSnapshot& out);

 private:
  using Key = std::tuple<std::string, std::string, collectors::bpf::BlockOp>;  // path, device, op
  using Totals = std::map<Key, collectors::bpf::CgroupIo>;

  // Walks the hierarchy when an id is new, or kRescanSamples after the last walk.
  void NameNewIds(const FileTree& sysfs, const collectors::CgroupLayout& layout,
                  const collectors::bpf::BlockIoSample& sample, uint64_t tick);
  void Rescan(const FileTree& sysfs, const collectors::CgroupLayout& layout, uint64_t tick);
  // Every named count (live and folded) summed into the selected ancestors;
  // the unnamed ones into `unresolved`.
  Totals Sum(const collectors::bpf::BlockIoSample& sample, const std::set<uint64_t>& forgotten,
             const std::unordered_map<uint32_t, std::string>& device_names,
             const CgroupSourceOptions& options, collectors::bpf::CgroupIo& unresolved) const;
  // The first max_pairs cgroup x device pairs into out.cgroups; the rest counted.
  static void Export(const Totals& totals, size_t max_pairs, BlockIoSnapshot& out);
  // Folds the gone ids whose counts stopped changing into retired_; their ids.
  std::vector<uint64_t> Retire(const collectors::bpf::BlockIoSample& sample,
                               const std::unordered_map<uint32_t, std::string>& device_names,
                               size_t max_depth);

  std::unordered_map<uint64_t, std::string> paths_;  // named ids, gone ones until retired
  std::unordered_set<uint64_t> gone_;                // named ids the last walk did not find
  std::unordered_set<uint64_t> unnamed_;             // ids no walk found
  std::unordered_set<std::string> live_paths_;       // the cgroups the last walk found
  std::map<std::pair<uint64_t, collectors::bpf::DiskOp>, collectors::bpf::CgroupIo> previous_;
  Totals retired_;  // by path cut to the depth
  collectors::bpf::CgroupIo retired_unresolved_;
  uint64_t last_scan_tick_ = 0;
};

}  // namespace iowatch::daemon
