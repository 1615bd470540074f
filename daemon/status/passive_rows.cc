#include "daemon/status/passive_rows.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <ctime>

#include "common/markup.h"

namespace iowatch::daemon {
namespace {

using probes::PassiveReason;

std::string Micros(double seconds) {
  return seconds > 0 ? fmt::format("<td class=\"n\">{:.1f}</td>", seconds * 1e6)
                     : std::string("<td class=\"dim\">–</td>");
}

// "since 07:12 UTC" from a start in ms since the epoch.
std::string SinceUtc(int64_t ms) {
  return fmt::format("since {:%H:%M} UTC", fmt::gmtime(static_cast<std::time_t>(ms / 1000)));
}

std::string StateCell(const PassiveSeriesRow& r) {
  const std::string since = r.regressed_since_ms > 0 ? " " + SinceUtc(r.regressed_since_ms) : "";
  if (r.drift_raised && r.drift_ratio) {
    return fmt::format("<td class=\"bad\">{:.2f}× its first day (drift){}</td>", *r.drift_ratio,
                       since);
  }
  if (r.regressed) return fmt::format("<td class=\"bad\">slower than its past{}</td>", since);
  const PassiveReason reason = r.last.reason;
  if (reason == PassiveReason::kJudged) {
    return r.last.bad ? std::string("<td class=\"bad\">slow minute</td>")
                      : std::string("<td class=\"good\">as its past</td>");
  }
  const size_t learning = r.windows[static_cast<size_t>(PassiveReason::kLearning)];
  const std::string why = reason == PassiveReason::kLearning
                              ? fmt::format("learning ({} minutes)", learning)
                          : reason == PassiveReason::kOutsideModel
                              ? "not judged: " + r.last.why
                              : fmt::format("not judged: {}", probes::ToString(reason));
  return fmt::format("<td class=\"dim\">{}</td>", HtmlEscape(why));
}

std::string RatioCell(const PassiveSeriesRow& r) {
  if (!r.judged) return "<td class=\"dim\">–</td>";
  return fmt::format("<td class=\"n{}\">{:.2f} / {:.2f}</td>", r.judged->bad ? " bad" : "",
                     r.judged->ratio, r.judged->bound_ratio);
}

// The share of the minutes with enough requests that were judged, since start.
std::string JudgedShare(const PassiveSeriesRow& r) {
  uint64_t busy = 0;
  for (uint64_t n : r.windows) busy += n;
  busy -= r.windows[static_cast<size_t>(PassiveReason::kTooFewRequests)];
  if (busy == 0) return "<td class=\"dim\">–</td>";
  const uint64_t judged = r.windows[static_cast<size_t>(PassiveReason::kJudged)];
  return fmt::format("<td class=\"n\">{:.0f} %</td>",
                     100.0 * static_cast<double>(judged) / static_cast<double>(busy));
}

}  // namespace

std::string PassiveSection(const PassiveSnapshot& passive) {
  std::string rows;
  for (const PassiveSeriesRow& r : passive.series) {
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>{}{}{}{}{}</tr>\n",
        HtmlEscape(r.device), HtmlEscape(r.op), HtmlEscape(r.size), probes::ToString(r.source),
        r.last.window.requests, Micros(r.last.window.mean_seconds),
        Micros(r.judged ? r.judged->predicted_seconds : 0), RatioCell(r), StateCell(r),
        JudgedShare(r));
  }
  if (rows.empty()) return {};
  return fmt::format(
      "<h2>Passive judge (each disk's own I/O, last minute)</h2>\n<table id=\"passive\"><tr>"
      "<th>device</th><th>op</th><th>size</th><th>latency</th><th>requests</th><th>mean µs</th>"
      "<th>predicted µs</th><th>ratio / bound</th><th>state</th><th>judged</th></tr>\n{}"
      "</table>\n",
      rows);
}

}  // namespace iowatch::daemon
