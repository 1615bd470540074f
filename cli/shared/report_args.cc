#include "cli/shared/report_args.h"

#include <fmt/format.h>

#include "common/decimal.h"

namespace iowatch::daemon {
namespace {

std::unexpected<Error> InvalidReportArg(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

// -d or -o at args[i] into `out`: whether it was one of them, or its error.
Result<bool> ParseSharedOption(const std::vector<std::string>& args, size_t& i,
                               std::string_view usage, ReportArgs& out) {
  const bool device = args[i].starts_with("-d");
  if (!device && !args[i].starts_with("-o")) return false;
  auto value = OptionValue(args, i, 2, usage);
  if (!value) return ErrorOf(value);
  if (device) {
    out.device = *value;
  } else if (*value != "JSON") {
    return InvalidReportArg(fmt::format("-o takes JSON, found '{}'", *value));
  } else {
    out.json = true;
  }
  return true;
}

// An option of the command, or of every reporting command, at args[i].
Status ParseOption(const std::vector<std::string>& args, size_t& i, std::string_view usage,
                   const OwnOption& own, ReportArgs& out) {
  auto taken = ParseSharedOption(args, i, usage, out);
  if (taken && !*taken && own) taken = own(args, i);
  if (!taken) return ErrorOf(taken);
  if (!*taken) return InvalidReportArg(fmt::format("unknown option '{}' ({})", args[i], usage));
  return {};
}

}  // namespace

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

Result<ReportArgs> ParseReportArgs(const std::vector<std::string>& args, std::string_view usage,
                                   const OwnOption& own) {
  ReportArgs out;
  std::vector<uint64_t> numbers;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() > 1 && arg[0] == '-') {
      if (Status parsed = ParseOption(args, i, usage, own, out); !parsed) {
        return ErrorOf(parsed);
      }
      continue;
    }
    const auto n = ParseDecimal<uint64_t>(arg);
    if (!n || numbers.size() == 2) {
      return InvalidReportArg(fmt::format("unexpected argument '{}' ({})", arg, usage));
    }
    numbers.push_back(*n);
  }
  auto timing = ParseIntervalCount(numbers);
  if (!timing) return ErrorOf(timing);
  out.interval_s = timing->interval_s;
  out.count = timing->count;
  return out;
}

}  // namespace iowatch::daemon
