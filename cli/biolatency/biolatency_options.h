// The command line of `iowatch biolatency`: [-d DEV] [-Q] [-o JSON]
// [interval [count]]. Without an interval, one report over one second.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "cli/shared/report_args.h"

namespace iowatch::daemon {

// -d is a disk; -o JSON gives one document per report with every stage.
struct BiolatencyOptions : ReportArgs {
  // -Q: the text shows the whole time from the request's start (queue and
  // device, stage "total"), as bcc's biolatency -Q; else the device stage.
  bool queued = false;
};

Result<BiolatencyOptions> ParseBiolatencyArgs(const std::vector<std::string>& args);

}  // namespace iowatch::daemon
