// One-shot results into a Prometheus Pushgateway (`iowatch probe` and
// `iowatch sweep --push-gateway URL`): the exposition text that /metrics
// renders, sent as it is with PUT to /metrics/job/JOB/LABEL/VALUE..., which
// replaces the whole group (every metric of an earlier push to the same
// grouping key is gone; POST would replace only same-named metrics).
//   URL       http://host[:port][/prefix] (https too)
//   job       the job label (--push-job; iowatch_probe, iowatch_sweep)
//   labels    the rest of the grouping key (--push-label NAME=VALUE), with
//             instance=<hostname> unless an instance is given
// The request is libcurl's (loaded on the first push: curl_library.h), made
// here rather than by prometheus-cpp's
// Gateway, which POSTs for Push(), reports any status below 400 as 200 (a
// 307 that pushed nothing looked like success), puts label values in the
// path unencoded and sets no timeout. Only a 2xx answer is success; curl's
// own timeout bounds the whole request, so nothing outlives the call.
// Errors name the URL and say what the gateway answered (its HTTP status, or
// curl's error).
// Thread-safety: any thread; each push has its own curl handle.
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
// "job"; values non-empty and valid UTF-8, which the gateway needs: a value
// that is not makes it answer 400, then 500 to every scrape);
// instance=<hostname> added unless one is given.
Result<PushTarget> MakePushTarget(const std::string& url, const std::string& job,
                                  const std::vector<std::string>& labels);

// The grouping key as the gateway's path: "/metrics/job/JOB/NAME/VALUE...",
// each value percent-encoded, or NAME@base64/<RFC 4648 URL-safe base64> when
// it holds a '/' or is a dot segment ("." or "..") that a path normaliser
// would fold.
std::string GroupingPath(const PushTarget& target);

// Errors when the gateway has not answered within `timeout` (connection
// included), or answered anything but 2xx.
Status PushExposition(const PushTarget& target, std::string_view exposition,
                      std::chrono::seconds timeout = std::chrono::seconds(30));

}  // namespace iowatch::daemon
