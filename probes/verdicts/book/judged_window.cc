#include "probes/verdicts/book/judged_window.h"

#include <algorithm>

#include "common/log.h"

namespace iowatch::probes {

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
  for (NotJudged reason : kNotJudgedReasons) {
    out.not_judged.emplace_back(ToString(reason), 0);
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

void JudgedWindows::Load(const Store& store, int64_t now_unix_ms) {
  windows_.clear();
  const auto since = store.RunVerdictsSince(now_unix_ms - JudgedWindow::kSpanMs);
  const auto last = store.LastJudgedRuns();
  if (!since || !last) {
    spdlog::error("probe store: {}; the share of runs judged starts afresh",
                  (since ? last.error() : since.error()).ToString());
    return;
  }
  for (const auto& [job, start_ms] : *last) windows_[job].SetLastJudged(start_ms);
  for (const StoredRunVerdict& v : *since) {
    windows_[v.job].Add(v.start_unix_ms, v.judged, v.reason);
  }
}

JudgedSummary JudgedWindows::Note(const RunRecord& run, const RunJudgement& judgement,
                                  int64_t now_unix_ms) {
  JudgedWindow& window = windows_[run.job];
  window.Add(run.start_unix_ms, judgement.judged, ToString(judgement.reason));
  return window.Summarize(now_unix_ms);
}

}  // namespace iowatch::probes
