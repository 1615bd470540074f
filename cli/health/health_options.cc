#include "cli/health/health_options.h"

#include <fmt/format.h>

#include <charconv>

namespace iowatch::daemon {
namespace {

Status NeedsValue(const std::string& flag, size_t i, size_t size) {
  if (i + 1 < size) return {};
  return MakeError(ErrorCode::kInvalidArgument, fmt::format("{}: expected a value", flag));
}

}  // namespace

Result<HealthOptions> ParseHealthArgs(const std::vector<std::string>& args,
                                      const std::string& default_state_dir) {
  HealthOptions o;
  o.state_dir = default_state_dir;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--no-smart") {
      o.smart = false;
      continue;
    }
    const bool takes_value = a == "-d" || a == "--device" || a == "-o" || a == "--output-format" ||
                             a == "--state.dir" || a == "--path.udev.data" ||
                             a == "--smart-timeout";
    if (!takes_value) {
      return MakeError(ErrorCode::kInvalidArgument,
                       fmt::format("{:?}: expected -d DEV, -o JSON, --state.dir DIR, "
                                   "--path.udev.data DIR, --smart-timeout SECONDS or --no-smart",
                                   a));
    }
    if (Status has = NeedsValue(a, i, args.size()); !has) return ErrorOf(has);
    const std::string& value = args[++i];
    if (a == "-d" || a == "--device") {
      o.device = value;
    } else if (a == "-o" || a == "--output-format") {
      if (value != "JSON" && value != "json") {
        return MakeError(ErrorCode::kInvalidArgument,
                         fmt::format("-o: expected JSON, found {:?}", value));
      }
      o.json = true;
    } else if (a == "--state.dir") {
      o.state_dir = value;
    } else if (a == "--path.udev.data") {
      o.udev_data = value;
    } else {
      double seconds = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
      if (ec != std::errc() || end != value.data() + value.size() || !(seconds > 0) ||
          seconds > 3600) {
        return MakeError(
            ErrorCode::kInvalidArgument,
            fmt::format("--smart-timeout: expected seconds in (0, 3600], found {:?}", value));
      }
      o.smart_timeout_seconds = seconds;
    }
  }
  return o;
}

}  // namespace iowatch::daemon
