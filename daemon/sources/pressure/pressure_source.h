// PressureSource: the host's pressure stall information, once per sample.
// Reads <procfs>/pressure/{cpu,io,memory} (collectors/pressure/pressure.h), keeps the
// maxima of each avg10 over the sampling window, and reports one collector,
// "pressure": it fails, with the file and errno, when any of the three is
// unreadable (a kernel without CONFIG_PSI, or booted with psi=0), and the
// files that were read are still exported.
// Thread-safety: not thread-safe; one job at a time (the Sampler's worker).
#pragma once

#include "daemon/sampling/sample_source.h"

namespace iowatch::daemon {

// Its registration (daemon/sources/registry.cc).
const SourceDescriptor& PressureSourceDescriptor();

// The families it renders (pressure_families.cc).
void AddPressureFamilies(TableBuilder& t);

}  // namespace iowatch::daemon
