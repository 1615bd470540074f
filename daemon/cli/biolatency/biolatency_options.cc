#include "daemon/cli/biolatency/biolatency_options.h"

#include <fmt/format.h>

#include "common/decimal.h"

namespace iowatch::daemon {
namespace {

std::unexpected<Error> Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

constexpr const char* kUsage =
    "usage: iowatch biolatency [-d DEV] [-Q] [-o JSON] [interval [count]]";

// The value of an option given as "-d sda" or "-dsda"; advances i past it.
Result<std::string> ValueOf(const std::vector<std::string>& args, size_t& i) {
  if (args[i].size() > 2) return args[i].substr(2);
  if (i + 1 >= args.size())
    return Invalid(fmt::format("{} requires a value ({})", args[i], kUsage));
  return args[++i];
}

}  // namespace

Result<BiolatencyOptions> ParseBiolatencyArgs(const std::vector<std::string>& args) {
  BiolatencyOptions opts;
  std::vector<uint64_t> numbers;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-Q") {
      opts.queued = true;
    } else if (arg.starts_with("-d")) {
      auto value = ValueOf(args, i);
      if (!value) return std::unexpected(value.error());
      opts.device = *value;
    } else if (arg.starts_with("-o")) {
      auto value = ValueOf(args, i);
      if (!value) return std::unexpected(value.error());
      if (*value != "JSON") return Invalid(fmt::format("-o takes JSON, found '{}'", *value));
      opts.json = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      return Invalid(fmt::format("unknown option '{}' ({})", arg, kUsage));
    } else {
      const auto n = ParseDecimal<uint64_t>(arg);
      if (!n || numbers.size() == 2) {
        return Invalid(fmt::format("unexpected argument '{}' ({})", arg, kUsage));
      }
      numbers.push_back(*n);
    }
  }
  if (!numbers.empty()) {
    if (numbers[0] < 1 || numbers[0] > 86400) {
      return Invalid("interval must be from 1 to 86400 seconds");
    }
    opts.interval_s = numbers[0];
  } else {
    opts.count = 1;
  }
  if (numbers.size() == 2) opts.count = numbers[1];
  return opts;
}

}  // namespace iowatch::daemon
