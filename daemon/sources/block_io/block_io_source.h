// BlockIoSource: the block-layer BPF collector (collectors/bpf/) in the
// sampler. Loads the program when collectors.bpf.enabled (again after a
// reload when loading failed, never per sample: a failure is a missing BTF,
// capability or kernel feature, which only a change on the host or in the
// config repairs), unloads it when disabled, keeps each wanted disk's
// alignment unit in the program's map, and turns each reading into the
// snapshot's block_io: per disk and op the latency histograms, request
// sizes, patterns and alignment, and per cgroup the bytes and requests
// (block_io_cgroups.h). Reports the collector "bpf"; while the program is
// not loaded, its status carries the cause.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "collectors/bpf/block_io_counters.h"
#include "collectors/cgroup/cgroup_io.h"
#include "common/file_tree.h"
#include "daemon/sampling/sample_source.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/source_context.h"
#include "daemon/sources/block_io/block_io_cgroups.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& BlockIoSourceDescriptor();

// The families it renders (block_io_families.cc).
void AddBlockIoFamilies(TableBuilder& t);

class BlockIoSource : public SampleSource {
 public:
  void Collect(const FileTree& procfs, const FileTree& sysfs, const SourceContext& context,
               Snapshot& out) override;

 private:
  // Loads the program unless loaded, or failed with these options; the error.
  std::optional<std::string> EnsureLoaded(const SourceContext& context);
  // Sets the alignment unit of new disks, clears that of disks gone.
  void Align(const std::vector<collectors::BlockDevice>& devices);
  void Export(const collectors::bpf::BlockIoSample& sample,
              const std::unordered_map<uint32_t, std::string>& names, bool queue_stage,
              BlockIoSnapshot& out) const;

  std::unique_ptr<collectors::bpf::BlockIoCounters> counters_;
  std::optional<std::string> load_error_;
  std::shared_ptr<const SamplerOptions> loaded_for_;  // the options the last load was tried with
  std::map<uint32_t, uint32_t> alignment_;            // KernelDev -> unit set in the program
  std::optional<collectors::bpf::BlockIoSample> previous_;
  std::optional<collectors::CgroupLayout> layout_;
  BlockIoCgroups cgroups_;
};

}  // namespace iowatch::daemon
