// The Pushgateway flags `iowatch probe` and `iowatch sweep` share:
// --push-gateway=URL, --push-job=NAME (the command's name by default:
// iowatch_probe, iowatch_sweep), --push-label=NAME=VALUE (repeatable; the
// grouping key after the job, with instance=<hostname> unless given) and
// --push-timeout=SECONDS (30). Parsed here, pushed by
// daemon/metrics/push/pushgateway.h after the results are printed (and, for
// a sweep, stored): a gateway that is down costs the push, not the results.
// Thread-safety: pure functions, except PushResults (main thread: curl).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch::daemon {

struct PushOptions {
  std::string url;  // empty: no push
  std::string job;  // empty: the command's default
  std::vector<std::string> labels;
  std::chrono::seconds timeout{30};
};

// Takes --push-* NAME=VALUE into `options`: true when `name` was one of them
// (its value checked: an error then), false when it is another option.
Result<bool> TakePushOption(std::string_view name, std::string_view value, PushOptions& options);

// The flags together, checked before anything runs: the URL, the job, the
// labels; --push-job or --push-label without --push-gateway is an error.
Status CheckPushOptions(const PushOptions& options);

// The flags' lines for the commands' --help.
std::string PushUsage(std::string_view default_job);

// Pushes `exposition` when --push-gateway was given; errors name the gateway.
Status PushResults(const PushOptions& options, std::string_view default_job,
                   std::string_view exposition);

}  // namespace iowatch::daemon
