// The command line of `iowatch biolatency`: [-d DEV] [-Q] [-o JSON]
// [interval [count]]. Without an interval, one report over one second.
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace iowatch::daemon {

struct BiolatencyOptions {
  std::string device;  // -d: only this disk (kernel name); "" = every disk
  // -Q: the text shows the whole time from the request's start (queue and
  // device, stage "total"), as bcc's biolatency -Q; else the device stage.
  bool queued = false;
  bool json = false;  // -o JSON: one document per report (every stage), one per line
  uint64_t interval_s = 1;
  std::optional<uint64_t> count;  // reports; none: forever (1 without an interval)
};

Result<BiolatencyOptions> ParseBiolatencyArgs(const std::vector<std::string>& args);

}  // namespace iowatch::daemon
