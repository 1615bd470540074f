// `iowatch advise [DEV...] [-o JSON] [--interval SECONDS]`: for each whole
// disk (or those named), its stripe geometry, queue settings, partitions and
// filesystem stripe hints, what it received (diskstats' average request
// sizes since boot, or over --interval), and the findings of
// advice/advice.h. Superblocks are read from /dev/NAME only on
// the host's sysfs (with --path.sysfs a fixture, they are not, and the
// output says so). Exit 0, 2 on a usage error.
#pragma once

#include <string>
#include <vector>

#include "cli/shared/global_options.h"

namespace iowatch::daemon {

int RunAdvise(const GlobalOptions& global, const std::vector<std::string>& args);

}  // namespace iowatch::daemon
