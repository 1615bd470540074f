#include "daemon/iostat_options.h"

#include <algorithm>

namespace iowatch::daemon {
namespace {

bool IsNumber(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::vector<std::string> SplitCommas(const std::string& list) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) items.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

std::unexpected<Error> Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

}  // namespace

Result<IostatOptions> ParseIostatArgs(const std::vector<std::string>& args) {
  IostatOptions opts;
  bool saw_c = false;
  bool saw_d = false;
  std::vector<long> numbers;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-p") {
      opts.partitions = true;
      // Like sysstat: the next argument is a device list unless it is a number or an option.
      if (i + 1 < args.size() && !IsNumber(args[i + 1]) && !args[i + 1].starts_with("-")) {
        ++i;
        if (args[i] != "ALL") opts.partition_devices = SplitCommas(args[i]);
      }
      continue;
    }
    if (arg == "-o") {
      if (i + 1 >= args.size() || args[i + 1] != "JSON") {
        return Invalid("option -o takes the output format JSON");
      }
      opts.json = true;
      ++i;
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-') {
      for (size_t j = 1; j < arg.size(); ++j) {
        switch (arg[j]) {
          case 'c': saw_c = true; break;
          case 'd': saw_d = true; break;
          case 'x': opts.extended = true; break;
          case 'k': opts.unit = SizeUnit::kKilobytes; break;
          case 'm': opts.unit = SizeUnit::kMegabytes; break;
          case 'N': opts.dm_names = true; break;
          case 'y': opts.skip_since_boot = true; break;
          case 'z': opts.omit_inactive = true; break;
          case 't': opts.timestamp = true; break;
          default:
            return Invalid(fmt::format(
                "unknown option '-{}' in '{}' (supported: -c -d -x -k -m -N -p -y -z -t -o JSON)",
                arg[j], arg));
        }
      }
      continue;
    }
    if (IsNumber(arg)) {
      if (numbers.size() == 2) return Invalid(fmt::format("unexpected extra number '{}'", arg));
      numbers.push_back(std::stol(arg));
      continue;
    }
    if (!numbers.empty()) {
      return Invalid(fmt::format("device '{}' must come before the interval and count", arg));
    }
    if (arg == "ALL") {
      opts.all_devices = true;
    } else {
      opts.devices.push_back(arg.starts_with("/dev/") ? arg.substr(5) : arg);
    }
  }
  if (saw_c || saw_d) {
    opts.show_cpu = saw_c;
    opts.show_devices = saw_d;
  }
  if (!numbers.empty()) {
    if (numbers[0] < 1) return Invalid("interval must be at least 1 second");
    opts.interval_s = numbers[0];
  }
  if (numbers.size() == 2) {
    if (numbers[1] < 1) return Invalid("count must be at least 1");
    opts.count = numbers[1];
  }
  return opts;
}

}  // namespace iowatch::daemon
