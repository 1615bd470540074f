// PressureSource: the host's pressure stall information, once per sample.
// Reads <procfs>/pressure/{cpu,io,memory} (collectors/pressure.h), keeps the
// maxima of each avg10 over the sampling window, and reports one collector,
// "pressure": it fails, with the file and errno, when any of the three is
// unreadable (a kernel without CONFIG_PSI, or booted with psi=0), and the
// files that were read are still exported.
// Thread-safety: not thread-safe; owned by the Sampler.
#pragma once

#include <array>
#include <cstdint>

#include "common/file_tree.h"
#include "daemon/sampling/snapshot.h"
#include "daemon/sampling/window_max.h"

namespace iowatch::daemon {

class PressureSource {
 public:
  // Fills out.pressure; returns the "pressure" collector's status (the
  // caller times it). `tick` counts samples, `window_samples` is the window.
  CollectorStatus Collect(const FileTree& procfs, uint64_t tick, uint64_t window_samples,
                          Snapshot& out);

 private:
  std::array<std::array<WindowMax, 2>, kPressureResourceCount> windows_;
};

}  // namespace iowatch::daemon
