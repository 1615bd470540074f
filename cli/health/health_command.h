// `iowatch health [-d DEV] [-o JSON] [--state.dir DIR] [--smart-timeout S]
// [--no-smart]`: one screen per host: each whole disk's identity, SMART
// verdict and the attributes that matter, the kernel log's I/O errors since
// boot, the filesystems on it (used %, inodes used %, read-only, errors) and
// the probe verdicts in the daemon's store (health_report.h). Read with the
// serve sources (one sample, smartctl waited for). Exit 0 when no problem,
// 1 when any, 2 on a usage error or when -d names no disk.
#pragma once

#include <string>
#include <vector>

#include "cli/shared/global_options.h"

namespace iowatch::daemon {

int RunHealth(const GlobalOptions& global, const std::vector<std::string>& args);

}  // namespace iowatch::daemon
