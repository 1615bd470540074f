#include "daemon/cli/iotop/iotop_options.h"

#include <fmt/format.h>

#include "common/decimal.h"
#include "daemon/cli/report_args.h"

namespace iowatch::daemon {
namespace {

std::unexpected<Error> Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

constexpr const char* kUsage =
    "usage: iowatch iotop [-d DEV] [-o JSON] [--depth N] "
    "[interval [count]]";

}  // namespace

Result<IotopOptions> ParseIotopArgs(const std::vector<std::string>& args) {
  IotopOptions opts;
  std::vector<uint64_t> numbers;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.starts_with("-d")) {
      auto value = OptionValue(args, i, 2, kUsage);
      if (!value) return std::unexpected(value.error());
      opts.device = *value;
    } else if (arg.starts_with("-o")) {
      auto value = OptionValue(args, i, 2, kUsage);
      if (!value) return std::unexpected(value.error());
      if (*value != "JSON") return Invalid(fmt::format("-o takes JSON, found '{}'", *value));
      opts.json = true;
    } else if (arg == "--depth") {
      auto value = OptionValue(args, i, arg.size(), kUsage);
      const auto depth = value ? ParseDecimal<uint32_t>(*value) : std::nullopt;
      if (!depth || *depth < 1 || *depth > 16) {
        return Invalid("--depth takes an integer from 1 to 16");
      }
      opts.depth = *depth;
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
  auto timing = ParseIntervalCount(numbers);
  if (!timing) return std::unexpected(timing.error());
  opts.interval_s = timing->interval_s;
  opts.count = timing->count;
  return opts;
}

}  // namespace iowatch::daemon
