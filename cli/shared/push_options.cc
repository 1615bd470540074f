#include "cli/shared/push_options.h"

#include <fmt/format.h>

#include <charconv>

#include "daemon/metrics/push/pushgateway.h"

namespace iowatch::daemon {

Result<bool> TakePushOption(std::string_view name, std::string_view value, PushOptions& options) {
  if (name == "push-gateway") {
    options.url = value;
  } else if (name == "push-job") {
    options.job = value;
  } else if (name == "push-label") {
    options.labels.emplace_back(value);
  } else if (name == "push-timeout") {
    int seconds = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (ec != std::errc() || end != value.data() + value.size() || seconds < 1) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("--push-timeout: expected whole seconds, 1 or more, found {:?}", value));
    }
    options.timeout = std::chrono::seconds(seconds);
  } else {
    return false;
  }
  return true;
}

Status CheckPushOptions(const PushOptions& options) {
  if (options.url.empty()) {
    if (options.job.empty() && options.labels.empty()) return {};
    return MakeError(ErrorCode::kInvalidArgument,
                     "--push-job and --push-label need --push-gateway=URL");
  }
  auto target =
      MakePushTarget(options.url, options.job.empty() ? "checked" : options.job, options.labels);
  if (!target) return ErrorOf(target);
  return {};
}

std::string PushUsage(std::string_view default_job) {
  return fmt::format(
      "  --push-gateway=URL\n"
      "      push the results to a Prometheus Pushgateway (http://HOST:PORT), replacing the\n"
      "      group's last push, after printing them\n"
      "  --push-job=NAME, default {}\n"
      "      the job label of the push\n"
      "  --push-label=NAME=VALUE\n"
      "      a grouping label (repeatable); instance=<hostname> unless given\n"
      "  --push-timeout=SECONDS, default 30\n"
      "      give up on a gateway that does not answer\n",
      default_job);
}

Status PushResults(const PushOptions& options, std::string_view default_job,
                   std::string_view exposition) {
  if (options.url.empty()) return {};
  auto target = MakePushTarget(
      options.url, options.job.empty() ? std::string(default_job) : options.job, options.labels);
  if (!target) return ErrorOf(target);
  return PushExposition(*target, exposition, options.timeout);
}

}  // namespace iowatch::daemon
