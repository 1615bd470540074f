// BlockIoSource: the block-layer BPF program (collectors/bpf/) in the
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

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& BlockIoSourceDescriptor();

// Its settings (daemon/sources/block_io/iowatch.yaml documents them).
inline constexpr auto kBpfEnabled = config::BoolSetting("collectors.bpf.enabled", "false");
// Also export stage="queue".
inline constexpr auto kBpfQueueStage = config::BoolSetting("collectors.bpf.queue_stage", "false");

// The families it renders (block_io_families.cc).
void AddBlockIoFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
