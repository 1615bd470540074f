// `iowatch sweep`: runs a device characterisation sweep (sweep_options.h)
// point by point through the probe pipeline (probes/pipeline/run_probe.h, so every
// point is measured and guarded as a probe is), prints it, stores it; or
// lists and compares stored sweeps. SIGINT or SIGTERM stops after the
// running point: what ran is printed, nothing is stored. Exit 0, 1 when a
// point failed or the sweep was interrupted, 2 on a usage error.
#pragma once

#include <string>
#include <vector>

#include "cli/shared/global_options.h"

namespace iowatch::daemon {

int RunSweep(const GlobalOptions& global, const std::vector<std::string>& args);

}  // namespace iowatch::daemon
