#include "daemon/scheduling/judged_window.h"

#include <algorithm>

#include "probes/baseline/job_judge.h"

namespace iowatch::daemon {

void JudgedWindow::Add(int64_t start_unix_ms, bool judged, std::string_view reason) {
  runs_.push_back({start_unix_ms, judged, std::string(reason)});
  if (judged) last_judged_unix_ms_ = std::max(last_judged_unix_ms_, start_unix_ms);
}

void JudgedWindow::SetLastJudged(int64_t start_unix_ms) {
  last_judged_unix_ms_ = std::max(last_judged_unix_ms_, start_unix_ms);
}

JudgedSummary JudgedWindow::Summarize(int64_t now_unix_ms) {
  while (!runs_.empty() && runs_.front().start_unix_ms < now_unix_ms - kSpanMs) {
    runs_.pop_front();
  }
  JudgedSummary out;
  out.last_judged_unix_ms = last_judged_unix_ms_;
  for (probes::NotJudged reason : probes::kNotJudgedReasons) {
    out.not_judged.emplace_back(probes::ToString(reason), 0);
  }
  for (const Run& run : runs_) {
    ++out.runs;
    if (run.judged) {
      ++out.judged;
      continue;
    }
    const auto it =
        std::ranges::find(out.not_judged, run.reason, &std::pair<std::string, uint64_t>::first);
    // A word from a newer iowatch's store is not one of ours: not counted by reason.
    if (it != out.not_judged.end()) ++it->second;
  }
  return out;
}

}  // namespace iowatch::daemon
