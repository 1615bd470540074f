#include "cli/iostat/iostat_options.h"

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

// Like sysstat: the next argument is a device list unless it is a number or an
// option. Returns the index of the last argument -p used.
size_t ParsePartitions(const std::vector<std::string>& args, size_t i, IostatOptions& opts) {
  opts.partitions = true;
  if (i + 1 < args.size() && !IsNumber(args[i + 1]) && !args[i + 1].starts_with("-")) {
    ++i;
    if (args[i] == "ALL") {
      opts.partitions_all = true;
    } else {
      opts.partition_devices = SplitCommas(args[i]);
    }
  }
  return i;
}

// -c and -d as given; they decide the blocks shown only once all are read.
struct BlockChoice {
  bool cpu = false;
  bool devices = false;
};

// One letter of a (possibly combined, "-xz") option `arg`.
Status ParseLetter(char letter, const std::string& arg, IostatOptions& opts, BlockChoice& blocks) {
  switch (letter) {
    case 'c':
      blocks.cpu = true;
      break;
    case 'd':
      blocks.devices = true;
      break;
    case 'x':
      opts.extended = true;
      break;
    case 'k':
    case 'm': {
      const SizeUnit unit = letter == 'k' ? SizeUnit::kKilobytes : SizeUnit::kMegabytes;
      if (opts.unit && *opts.unit != unit) return Invalid("options -k and -m exclude each other");
      opts.unit = unit;
      break;
    }
    case 'N':
      opts.dm_names = true;
      break;
    case 'y':
      opts.skip_since_boot = true;
      break;
    case 'z':
      opts.omit_inactive = true;
      break;
    case 't':
      opts.timestamp = true;
      break;
    default:
      return Invalid(fmt::format(
          "unknown option '-{}' in '{}' (supported: -c -d -x -k -m -N -p -y -z -t -o JSON)", letter,
          arg));
  }
  return {};
}

Status ParseLetters(const std::string& arg, IostatOptions& opts, BlockChoice& blocks) {
  for (size_t j = 1; j < arg.size(); ++j) {
    if (Status parsed = ParseLetter(arg[j], arg, opts, blocks); !parsed) return parsed;
  }
  return {};
}

// A positional number: [interval [count]].
Status AddNumber(const std::string& arg, std::vector<long>& numbers) {
  if (numbers.size() == 2) return Invalid(fmt::format("unexpected extra number '{}'", arg));
  if (arg.size() > 9) return Invalid(fmt::format("number '{}' is too large", arg));
  numbers.push_back(std::stol(arg));
  return {};
}

// sysstat: -c and -d each select their block, and -x always shows devices.
void ApplyBlockChoice(const BlockChoice& blocks, IostatOptions& opts) {
  if (blocks.cpu || blocks.devices) {
    opts.show_cpu = blocks.cpu;
    opts.show_devices = blocks.devices || opts.extended;
  }
}

Status ApplyIntervalAndCount(const std::vector<long>& numbers, IostatOptions& opts) {
  // As sysstat: an interval of 0 means a single report.
  if (!numbers.empty() && numbers[0] > 0) opts.interval_s = numbers[0];
  if (numbers.size() == 2) {
    if (numbers[1] < 1) return Invalid("count must be at least 1");
    if (!opts.interval_s) return Invalid("a count needs an interval of at least 1 second");
    opts.count = numbers[1];
  }
  return {};
}

}  // namespace

Result<IostatOptions> ParseIostatArgs(const std::vector<std::string>& args) {
  IostatOptions opts;
  BlockChoice blocks;
  std::vector<long> numbers;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    Status parsed;
    if (arg == "-p") {
      i = ParsePartitions(args, i, opts);
    } else if (arg == "-o") {
      if (i + 1 >= args.size() || args[i + 1] != "JSON") {
        return Invalid("option -o takes the output format JSON");
      }
      opts.json = true;
      ++i;
    } else if (arg.size() > 1 && arg[0] == '-') {
      parsed = ParseLetters(arg, opts, blocks);
    } else if (IsNumber(arg)) {
      parsed = AddNumber(arg, numbers);
    } else if (arg == "ALL") {
      opts.all_devices = true;
    } else {
      opts.devices.push_back(arg.starts_with("/dev/") ? arg.substr(5) : arg);
    }
    if (!parsed) return ErrorOf(parsed);
  }
  ApplyBlockChoice(blocks, opts);
  if (Status applied = ApplyIntervalAndCount(numbers, opts); !applied) {
    return ErrorOf(applied);
  }
  return opts;
}

}  // namespace iowatch::daemon
