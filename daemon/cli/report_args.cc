#include "daemon/cli/report_args.h"

#include <fmt/format.h>

namespace iowatch::daemon {

Result<std::string> OptionValue(const std::vector<std::string>& args, size_t& i, size_t flag_size,
                                std::string_view usage) {
  if (args[i].size() > flag_size) return args[i].substr(flag_size);
  if (i + 1 >= args.size()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} requires a value ({})", args[i], usage));
  }
  return args[++i];
}

Result<IntervalCount> ParseIntervalCount(const std::vector<uint64_t>& numbers) {
  IntervalCount out;
  if (numbers.empty()) {
    out.count = 1;
    return out;
  }
  if (numbers[0] < 1 || numbers[0] > 86400) {
    return MakeError(ErrorCode::kInvalidArgument, "interval must be from 1 to 86400 seconds");
  }
  out.interval_s = numbers[0];
  if (numbers.size() == 2) out.count = numbers[1];
  return out;
}

}  // namespace iowatch::daemon
