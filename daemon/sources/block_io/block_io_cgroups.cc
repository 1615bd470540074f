#include "daemon/sources/block_io/block_io_cgroups.h"

#include <algorithm>
#include <set>
#include <utility>

#include "collectors/cgroup/cgroup_ids.h"
#include "collectors/cgroup/cgroup_names.h"

namespace iowatch::daemon {
namespace {

namespace bpf = collectors::bpf;

// The first `depth` components of a relative cgroup path.
std::string Cut(const std::string& path, size_t depth) {
  size_t end = 0;
  for (size_t d = 0; d < depth; ++d) {
    const size_t slash = path.find('/', end == 0 ? 0 : end + 1);
    if (slash == std::string::npos) return path;
    end = slash;
  }
  return path.substr(0, end);
}

void Add(bpf::CgroupIo& to, const bpf::CgroupIo& from) {
  to.bytes += from.bytes;
  to.requests += from.requests;
}

}  // namespace

void BlockIoCgroups::Rescan(const FileTree& sysfs, const collectors::CgroupLayout& layout,
                            uint64_t tick) {
  auto ids = collectors::ScanCgroupIds(sysfs, layout);
  if (!ids) return;  // the root unreadable: keep what is known, try again next sample
  last_scan_tick_ = tick;
  live_paths_.clear();
  for (const auto& [id, path] : ids->paths) live_paths_.insert(path);
  // Folded counts of cgroups whose every ancestor is gone too count nowhere.
  std::erase_if(retired_, [&](const auto& entry) {
    return !live_paths_.contains(Cut(std::get<0>(entry.first), 1));
  });
  for (auto& [id, path] : ids->paths) {
    gone_.erase(id);
    unnamed_.erase(id);
    paths_.insert_or_assign(id, std::move(path));
  }
  if (ids->truncated) return;  // an id not found may be beyond the walk's limit
  for (const auto& [id, path] : paths_) {
    if (!ids->paths.contains(id)) gone_.insert(id);
  }
}

std::vector<uint64_t> BlockIoCgroups::Retire(
    const bpf::BlockIoSample& sample, const std::unordered_map<uint32_t, std::string>& device_names,
    size_t max_depth) {
  // Each candidate's entries now, and whether any changed since the last sample.
  std::map<uint64_t, bool> settled;
  for (const auto& [key, io] : sample.cgroups) {
    if (!gone_.contains(key.first) && !unnamed_.contains(key.first)) continue;
    const auto before = previous_.find(key);
    const bool same = before != previous_.end() && before->second == io;
    auto [it, inserted] = settled.try_emplace(key.first, same);
    if (!inserted) it->second = it->second && same;
  }
  std::vector<uint64_t> forget;
  for (const auto& [id, still] : settled) {
    if (still) forget.push_back(id);  // a removed cgroup's last writeback may still be counted
  }
  const std::set<uint64_t> forgotten(forget.begin(), forget.end());
  for (const auto& [key, io] : sample.cgroups) {
    if (!forgotten.contains(key.first)) continue;
    const auto path = paths_.find(key.first);
    if (path == paths_.end()) {
      Add(retired_unresolved_, io);
      continue;
    }
    const auto name = device_names.find(bpf::KernelDev(key.second.major, key.second.minor));
    if (name == device_names.end()) continue;  // a disk gone or not reported
    Add(retired_[{Cut(path->second, max_depth), name->second, key.second.op}], io);
  }
  // Gone cgroups without entries (they did no I/O) need no folding.
  for (auto it = gone_.begin(); it != gone_.end();) {
    if (forgotten.contains(*it) || !settled.contains(*it)) {
      paths_.erase(*it);
      it = gone_.erase(it);
    } else {
      ++it;
    }
  }
  for (const uint64_t id : forget) unnamed_.erase(id);
  return forget;
}

void BlockIoCgroups::NameNewIds(const FileTree& sysfs, const collectors::CgroupLayout& layout,
                                const bpf::BlockIoSample& sample, uint64_t tick) {
  bool unknown = false;
  for (const auto& [key, io] : sample.cgroups) {
    unknown = unknown || (!paths_.contains(key.first) && !unnamed_.contains(key.first));
  }
  if (unknown || last_scan_tick_ == 0 || tick >= last_scan_tick_ + kRescanSamples) {
    Rescan(sysfs, layout, tick);
  }
  for (const auto& [key, io] : sample.cgroups) {
    if (!paths_.contains(key.first)) unnamed_.insert(key.first);
  }
}

BlockIoCgroups::Totals BlockIoCgroups::Sum(
    const bpf::BlockIoSample& sample, const std::set<uint64_t>& forgotten,
    const std::unordered_map<uint32_t, std::string>& device_names,
    const CgroupSourceOptions& options, bpf::CgroupIo& unresolved) const {
  Totals totals;
  // A gone cgroup's folded counts go to its ancestors still there.
  const auto add_to_ancestors = [&](const std::string& path, const std::string& device,
                                    bpf::BlockOp op, const bpf::CgroupIo& io, bool live_only) {
    const size_t depth = std::min(collectors::CgroupDepth(path), options.max_depth);
    for (size_t d = 1; d <= depth; ++d) {
      std::string ancestor = Cut(path, d);
      if (live_only && !live_paths_.contains(ancestor)) break;
      if (options.filter.Matches(ancestor)) Add(totals[{std::move(ancestor), device, op}], io);
    }
  };
  std::set<std::string> wanted;
  for (const auto& [dev, name] : device_names) wanted.insert(name);
  for (const auto& [key, io] : retired_) {
    const auto& [path, device, op] = key;
    if (wanted.contains(device)) add_to_ancestors(path, device, op, io, true);
  }
  unresolved = retired_unresolved_;
  for (const auto& [key, io] : sample.cgroups) {
    if (forgotten.contains(key.first)) continue;
    const auto name = device_names.find(bpf::KernelDev(key.second.major, key.second.minor));
    if (name == device_names.end()) continue;
    const auto path = paths_.find(key.first);
    if (path == paths_.end()) {
      Add(unresolved, io);
    } else {
      add_to_ancestors(path->second, name->second, key.second.op, io, false);
    }
  }
  return totals;
}

void BlockIoCgroups::Export(const Totals& totals, size_t max_pairs, BlockIoSnapshot& out) {
  // The first max_pairs cgroup x device pairs, in path order (their keys are adjacent).
  size_t kept = 0;
  uint64_t dropped = 0;
  const Key* pair = nullptr;
  bool pair_kept = false;
  for (const auto& [key, io] : totals) {
    const auto& [path, device, op] = key;
    if (pair == nullptr || std::get<0>(*pair) != path || std::get<1>(*pair) != device) {
      pair = &key;
      pair_kept = kept < max_pairs;
      if (pair_kept) {
        ++kept;
      } else {
        ++dropped;
      }
    }
    if (pair_kept) {
      out.cgroups.push_back({path, collectors::UnitOf(path), device, op, io.bytes, io.requests});
    }
  }
  out.cgroup_dropped_series = dropped;
}

std::vector<uint64_t> BlockIoCgroups::Update(
    const FileTree& sysfs, const collectors::CgroupLayout& layout, const bpf::BlockIoSample& sample,
    const std::unordered_map<uint32_t, std::string>& device_names,
    const CgroupSourceOptions& options, uint64_t tick, BlockIoSnapshot& out) {
  NameNewIds(sysfs, layout, sample, tick);
  const std::vector<uint64_t> forget = Retire(sample, device_names, options.max_depth);
  bpf::CgroupIo unresolved;
  const Totals totals = Sum(sample, std::set<uint64_t>(forget.begin(), forget.end()), device_names,
                            options, unresolved);
  previous_ = sample.cgroups;
  Export(totals, options.max_pairs, out);
  out.unresolved_bytes = unresolved.bytes;
  out.unresolved_requests = unresolved.requests;
  return forget;
}

}  // namespace iowatch::daemon
