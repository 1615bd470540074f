// JudgedWindow: whether a probe job's successful runs of the last 24 hours
// were judged and, if not, why, plus the start of its last judged run, so
// that silence is visible: a disk whose runs are never judged (always busy,
// a CPU always stolen, a band that never learns) has no verdict, and
// nothing would say so (iowatch_probe_judged_ratio, _not_judged_runs,
// _last_judged_timestamp_seconds; the alert IowatchProbeNotJudged).
// The recorder fills it from the store at start and with each run after.
// Thread-safety: none; one owner.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "probes/store/store.h"
#include "probes/verdicts/job_judge.h"

namespace iowatch::probes {

struct JudgedSummary {
  uint64_t runs = 0;    // successful runs in the window
  uint64_t judged = 0;  // of which judged
  // Runs not judged per reason (NotJudged's words), in
  // kNotJudgedReasons' order, every reason present (0 when none).
  std::vector<std::pair<std::string, uint64_t>> not_judged;
  int64_t last_judged_unix_ms = 0;  // 0: never judged
  bool operator==(const JudgedSummary&) const = default;
};

class JudgedWindow {
 public:
  static constexpr int64_t kSpanMs = int64_t{24} * 3600 * 1000;

  // A run that started at start_unix_ms; reason "judged" when it was.
  void Add(int64_t start_unix_ms, bool judged, std::string_view reason);
  // The last judged run's start as the store knows it (it may be older than
  // the window).
  void SetLastJudged(int64_t start_unix_ms);
  // Drops the runs older than kSpanMs before now and sums up the rest.
  JudgedSummary Summarize(int64_t now_unix_ms);

 private:
  struct Run {
    int64_t start_unix_ms;
    bool judged;
    std::string reason;
  };
  std::deque<Run> runs_;
  int64_t last_judged_unix_ms_ = 0;
};

// Every job's window, kept beside the store: read from it when it opens,
// then each run noted as its verdict is stored (SeriesBook::Save).
// Thread-safety: none; the recorder calls it with its store mutex held.
class JudgedWindows {
 public:
  // Replaces the windows with the store's runs of the last day and last
  // judged runs; a store that cannot say is logged and the windows start
  // afresh.
  void Load(const Store& store, int64_t now_unix_ms);
  // Adds whether the run was judged, and why not, to its job's window, and
  // returns that window's summary.
  JudgedSummary Note(const RunRecord& run, const RunJudgement& judgement, int64_t now_unix_ms);
  JudgedSummary Summarize(const std::string& job, int64_t now_unix_ms) {
    return windows_[job].Summarize(now_unix_ms);
  }

 private:
  std::map<std::string, JudgedWindow> windows_;
};

}  // namespace iowatch::probes
