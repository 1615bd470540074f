#include "probes/verdicts/book/series_book.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/log.h"
#include "common/terminal_text.h"

namespace iowatch::probes {

SeriesBook::SeriesBook(RegressionTracker rule, std::set<std::string> jobs)
    : rule_(std::move(rule)), jobs_(std::move(jobs)) {}

std::string SeriesBook::KeyOf(std::string_view job, std::string_view fingerprint,
                              std::string_view device) {
  return fmt::format("{}\n{}\n{}", job, fingerprint, device);
}

void SeriesBook::Load(Store& store, int64_t now_unix_ms) {
  series_.clear();
  std::vector<UnreadableSeriesState> unreadable;
  Result<std::vector<StoredSeriesState>> stored = store.SeriesStates(rule_, unreadable);
  if (!stored) {
    spdlog::error("probe store: {}; the verdicts' hysteresis and suspect spans start afresh",
                  stored.error().ToString());
    return;
  }
  for (const UnreadableSeriesState& row : unreadable) Quarantine(store, row, now_unix_ms);
  for (StoredSeriesState& s : *stored) {
    if (!jobs_.contains(s.job)) continue;
    const std::string key = KeyOf(s.job, s.fingerprint, s.device);
    Series& series = series_[key];
    series.job = std::move(s.job);
    series.fingerprint = std::move(s.fingerprint);
    series.device = std::move(s.device);
    series.through_run_id = s.through_run_id;
    series.state = std::move(s.state);
  }
}

// One bad row costs its own series' state only, configured or not; moved
// aside, it is named once, not at every start.
void SeriesBook::Quarantine(Store& store, const UnreadableSeriesState& row, int64_t now_unix_ms) {
  const Status moved = store.QuarantineSeriesState(row, now_unix_ms);
  if (!moved) {
    spdlog::error(
        "probe store {}: {}; that series' verdict state starts afresh, and the row could "
        "not be moved aside: {}",
        TerminalText(store.Path()), TerminalText(row.Describe()),
        TerminalText(moved.error().ToString()));
    return;
  }
  spdlog::warn(
      "probe store {}: {}; that series' verdict state starts afresh (the row is moved to "
      "series_states_quarantine)",
      TerminalText(store.Path()), TerminalText(row.Describe()));
}

Result<SeriesState*> SeriesBook::Open(Store& store, const RunRecord& run) {
  const std::string key = KeyOf(run.job, run.fingerprint, run.device);
  for (auto it = series_.begin(); it != series_.end();) {
    const Series& s = it->second;
    if (s.job != run.job || it->first == key) {
      ++it;
      continue;
    }
    if (Status deleted = store.DeleteSeriesState(s.job, s.fingerprint, s.device); !deleted) {
      return ErrorOf(deleted);
    }
    it = series_.erase(it);
  }
  auto [it, added] = series_.try_emplace(key);
  if (added) {
    Series& series = it->second;
    series.job = run.job;
    series.fingerprint = run.fingerprint;
    series.device = run.device;
    series.state.tracker = rule_;
    // Stored at once, as of the run before this one: a kill before this
    // run's state is stored leaves a state to catch it up from, and the
    // runs of an earlier life of the series (a job edited back) are not
    // judged again.
    series.through_run_id = run.id - 1;
    if (Status stored = store.PutSeriesState(
            {series.job, series.fingerprint, series.device, series.through_run_id, series.state});
        !stored) {
      series_.erase(it);
      return ErrorOf(stored);
    }
  }
  return &it->second.state;
}

DeviceSuspicion SeriesBook::Beside(const RunRecord& run) const {
  DeviceSuspicion device;
  const std::string key = KeyOf(run.job, run.fingerprint, run.device);
  for (const auto& [other_key, other] : series_) {
    if (other_key != key && other.device == run.device) device.Add(other.state);
  }
  return device;
}

Result<std::vector<JudgedRun>> SeriesBook::CatchUp(const RunRecord& run, BaselineSource& source,
                                                   const BaselinePolicy& policy, int64_t now_ms) {
  std::vector<JudgedRun> judged;
  const auto it = series_.find(KeyOf(run.job, run.fingerprint, run.device));
  if (it == series_.end()) return judged;  // not opened
  Series& s = it->second;
  Result<std::vector<LearningCandidate>> candidates = source.Candidates();
  if (!candidates) return ErrorOf(candidates);
  // In the order live judging took them: as stored (candidates come by start).
  std::vector<int64_t> missed;
  for (const LearningCandidate& c : *candidates) {
    if (c.id > s.through_run_id && c.id < run.id) missed.push_back(c.id);
  }
  std::ranges::sort(missed);
  for (const int64_t id : missed) {
    Result<RunRecord> stored = source.Load(id);
    if (!stored) return ErrorOf(stored);
    Result<RunJudgement> j = JudgeRun(*stored, source, s.state, Beside(run), policy, now_ms);
    if (!j) return ErrorOf(j);
    judged.push_back({std::move(*stored), std::move(*j)});
  }
  if (!judged.empty()) {
    spdlog::info("probe {}: {} stored runs on {} judged again: a stop had left them unjudged",
                 run.job, judged.size(), run.device);
  }
  return judged;
}

Status SeriesBook::Save(Store& store, const RunRecord& run, std::span<const JudgedRun> judged) {
  const auto it = series_.find(KeyOf(run.job, run.fingerprint, run.device));
  if (it == series_.end()) return {};
  StoredSeriesState stored;
  stored.job = run.job;
  stored.fingerprint = run.fingerprint;
  stored.device = run.device;
  stored.through_run_id = run.id;
  stored.state = it->second.state;
  std::vector<RunVerdictRow> verdicts;
  for (const JudgedRun& r : judged) {
    verdicts.push_back({r.run.id, r.judgement.judged, std::string(ToString(r.judgement.reason))});
  }
  if (Status saved = store.PutSeriesState(stored, verdicts); !saved) return saved;
  it->second.through_run_id = run.id;
  return {};
}

const SeriesState* SeriesBook::Find(const RunRecord& run) const {
  const auto it = series_.find(KeyOf(run.job, run.fingerprint, run.device));
  return it == series_.end() ? nullptr : &it->second.state;
}

}  // namespace iowatch::probes
