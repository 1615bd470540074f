// One-shot results into a Prometheus Pushgateway (`iowatch probe` and
// `iowatch sweep --push-gateway URL`), with prometheus-cpp's push library:
// the rendered exposition text (ParseExposition) pushed with PUT under
// /metrics/job/JOB/LABEL/VALUE..., so that a run from CI, cron or a
// provisioning pipeline replaces its group's previous push and lands beside
// the daemon's series, with the same names.
//   URL       http://host[:port][/prefix] (https too; port 80/443 by default)
//   job       the job label (--push-job; iowatch_probe, iowatch_sweep)
//   labels    the rest of the grouping key (--push-label NAME=VALUE), with
//             instance=<hostname> unless an instance is given
// Errors name the URL and say what the gateway answered (its HTTP status, or
// curl's error).
// Thread-safety: main thread only (curl's global init).
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace iowatch::daemon {

struct PushTarget {
  std::string url;
  std::string job;
  std::vector<std::pair<std::string, std::string>> labels;
};

// Checks the URL, the job and NAME=VALUE labels (Prometheus label names, not
// "job"); instance=<hostname> added unless one is given.
Result<PushTarget> MakePushTarget(const std::string& url, const std::string& job,
                                  const std::vector<std::string>& labels);

// Errors too when the gateway has not answered within `timeout` (the push
// goes on, on its own thread, until the process exits).
Status PushExposition(const PushTarget& target, std::string_view exposition,
                      std::chrono::seconds timeout = std::chrono::seconds(30));

}  // namespace iowatch::daemon
