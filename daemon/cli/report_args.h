// What the reporting commands' command lines share (iotop, biolatency): an
// option's value given as "-d sda" or "-dsda", and the trailing
// [interval [count]] as sysstat's tools take it.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch::daemon {

// The value of args[i], an option `flag_size` characters long, attached or in
// the next argument (advancing i past it); `usage` goes into the error.
Result<std::string> OptionValue(const std::vector<std::string>& args, size_t& i, size_t flag_size,
                                std::string_view usage);

struct IntervalCount {
  uint64_t interval_s = 1;
  std::optional<uint64_t> count;  // none: forever; 1 without an interval
};

// The positional integers, in order (at most two): no interval means one
// report over one second.
Result<IntervalCount> ParseIntervalCount(const std::vector<uint64_t>& numbers);

}  // namespace iowatch::daemon
