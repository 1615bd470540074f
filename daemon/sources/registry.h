// The registry of the sample's sources: every source the daemon reads, in
// the order their collectors appear in a snapshot and in which they run
// when read in order (the disks first: the sources after them attribute
// their I/O to this sample's devices). The Sampler runs them, the metrics
// renderer adds their families, `check-config` asks them whether they can
// run here, and docs/metrics.md's collector list is tested against them.
// Thread-safety: constants.
#pragma once

#include <span>
#include <vector>

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

std::span<const SourceDescriptor> RegisteredSources();

// The settings the registered sources declare, in registry order: what
// config::LoadConfigFile reads beside its own schema.
std::vector<config::Setting> RegisteredSettings();

}  // namespace iowatch::daemon
