// What the reporting commands' command lines share (iotop, biolatency): -d DEV
// and -o JSON, an option's value given as "-d sda" or "-dsda", and the
// trailing [interval [count]] as sysstat's tools take it. iostat and vmstat
// do not use it: they keep sysstat's and procps' own rules and messages
// (an interval of 0, counts, device names among the numbers), which the e2e
// tests compare with the real tools.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
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

// A reporting command's options, those every one takes.
struct ReportArgs {
  std::string device;  // -d: only this device (kernel name); "" = every one
  bool json = false;   // -o JSON: one JSON document per report, one per line
  uint64_t interval_s = 1;
  std::optional<uint64_t> count;  // reports; none: forever (1 without an interval)
};

// A command's own options: given args[i], an option that is neither -d nor
// -o, it returns whether the option is one of the command's, having taken it
// (and i past its value), or the error that it is wrong.
using OwnOption = std::function<Result<bool>(const std::vector<std::string>& args, size_t& i)>;

// [-d DEV] [-o JSON] [own options] [interval [count]], in any order; an option
// neither shared nor `own`'s (`own` may be empty) is an error naming it with
// `usage` ("usage: ...").
Result<ReportArgs> ParseReportArgs(const std::vector<std::string>& args, std::string_view usage,
                                   const OwnOption& own);

}  // namespace iowatch::daemon
