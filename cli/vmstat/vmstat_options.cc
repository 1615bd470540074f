#include "cli/vmstat/vmstat_options.h"

#include <charconv>
#include <climits>

#include "common/decimal.h"

namespace iowatch::daemon {
namespace {

std::unexpected<Error> Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

Result<uint64_t> UnitBytes(char c) {
  switch (c) {
    case 'b':
    case 'B':
      return 1;
    case 'k':
      return 1000;
    case 'K':
      return 1024;
    case 'm':
      return 1000000;
    case 'M':
      return 1048576;
    default:
      return Invalid("-S requires k, K, m or M (default is KiB)");
  }
}

Result<uint64_t> ParseNumber(const std::string& arg, const char* what) {
  const auto value = ParseDecimal<uint64_t>(arg);
  if (!value) return Invalid(fmt::format("{} '{}' is not a whole number", what, arg));
  return *value;
}

}  // namespace

Result<VmstatOptions> ParseVmstatArgs(const std::vector<std::string>& args) {
  VmstatOptions opts;
  std::vector<uint64_t> numbers;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() > 1 && arg[0] == '-') {
      for (size_t j = 1; j < arg.size(); ++j) {
        switch (arg[j]) {
          case 'a':
            opts.active = true;
            break;
          case 'w':
            opts.wide = true;
            break;
          case 't':
            opts.timestamp = true;
            break;
          case 'n':
            opts.one_header = true;
            break;
          case 'y':
            opts.skip_since_boot = true;
            break;
          case 'S': {
            // "-Sm" or "-S m"; like getopt, only the first letter of the value counts.
            std::string value = arg.substr(j + 1);
            if (value.empty()) {
              if (i + 1 >= args.size()) return Invalid("-S requires k, K, m or M (default is KiB)");
              value = args[++i];
            }
            auto unit = UnitBytes(value[0]);
            if (!unit) return ErrorOf(unit);
            opts.unit_bytes = *unit;
            j = arg.size();
            break;
          }
          default:
            return Invalid(
                fmt::format("unknown option '-{}' in '{}' (supported: -a -w -t -n -y -S k|K|m|M)",
                            arg[j], arg));
        }
      }
      continue;
    }
    if (numbers.size() == 2) return Invalid(fmt::format("unexpected argument '{}'", arg));
    auto n = ParseNumber(arg, numbers.empty() ? "delay" : "count");
    if (!n) return ErrorOf(n);
    numbers.push_back(*n);
  }
  if (!numbers.empty()) {
    if (numbers[0] < 1) return Invalid("delay must be a positive integer");
    if (numbers[0] > UINT_MAX) return Invalid("delay is too large");
    opts.delay_s = numbers[0];
  }
  if (numbers.size() == 2) opts.count = numbers[1];
  return opts;
}

}  // namespace iowatch::daemon
