#include "daemon/cli/iotop/iotop_options.h"

#include <fmt/format.h>

#include "common/decimal.h"

namespace iowatch::daemon {
namespace {

std::unexpected<Error> Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

constexpr const char* kUsage =
    "usage: iowatch iotop [-d DEV] [-o JSON] [--depth N] "
    "[interval [count]]";

// The value of an option given as "-d sda" or "-dsda"; advances i past it.
Result<std::string> ValueOf(const std::vector<std::string>& args, size_t& i, size_t flag_size) {
  if (args[i].size() > flag_size) return args[i].substr(flag_size);
  if (i + 1 >= args.size())
    return Invalid(fmt::format("{} requires a value ({})", args[i], kUsage));
  return args[++i];
}

}  // namespace

Result<IotopOptions> ParseIotopArgs(const std::vector<std::string>& args) {
  IotopOptions opts;
  std::vector<uint64_t> numbers;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.starts_with("-d")) {
      auto value = ValueOf(args, i, 2);
      if (!value) return std::unexpected(value.error());
      opts.device = *value;
    } else if (arg.starts_with("-o")) {
      auto value = ValueOf(args, i, 2);
      if (!value) return std::unexpected(value.error());
      if (*value != "JSON") return Invalid(fmt::format("-o takes JSON, found '{}'", *value));
      opts.json = true;
    } else if (arg == "--depth") {
      auto value = ValueOf(args, i, arg.size());
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
