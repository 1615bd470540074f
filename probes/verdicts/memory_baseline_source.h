// MemoryBaselineSource: a probe series' runs and baselines held in memory,
// for JudgeRun (job_judge.h) where there is no store: the replay harness
// (tests/bench/verdicts) and tests. Runs are added as they are "stored";
// Load finds them by id.
// Thread-safety: none; one owner.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "probes/verdicts/job_judge.h"

namespace iowatch::probes {

class MemoryBaselineSource final : public BaselineSource {
 public:
  // Adds a successful run (its id set) to the series' learning candidates.
  void Add(const RunRecord& run) {
    runs_[run.id] = run;
    candidates_.push_back({run.id, run.start_unix_ms, run.conditions});
  }
  // Replaces (or adds) a baseline behind the judge's back, as `iowatch
  // baseline capture` or `import` would (pinned); returns its new id.
  int64_t Replace(const Baseline& baseline, bool pinned = true) {
    const int64_t id = *Put(baseline);
    baselines_[baseline.band].pinned = pinned;
    return id;
  }
  // Forgets every baseline and candidate, as `iowatch baseline reset`.
  void Reset() {
    baselines_.clear();
    candidates_.clear();
  }

  Result<std::vector<StoredBaseline>> Baselines() override {
    std::vector<StoredBaseline> out;
    for (const auto& [band, stored] : baselines_) out.push_back(stored);
    return out;
  }
  Result<std::vector<LearningCandidate>> Candidates() override { return candidates_; }
  Result<RunRecord> Load(int64_t id) override {
    const auto it = runs_.find(id);
    if (it == runs_.end()) return MakeError(ErrorCode::kNotFound, "no run with that id");
    return it->second;
  }
  Result<std::vector<MetricSample>> LoadMetrics(int64_t id) override {
    const auto it = runs_.find(id);
    if (it == runs_.end()) return MakeError(ErrorCode::kNotFound, "no run with that id");
    return it->second.metrics;
  }
  Result<int64_t> Put(const Baseline& baseline) override {
    const int64_t id = ++next_id_;
    baselines_[baseline.band] =
        StoredBaseline{id, false, static_cast<int64_t>(baseline.run_ids.size()), baseline, {}};
    return id;
  }

 private:
  std::map<int64_t, RunRecord> runs_;
  std::vector<LearningCandidate> candidates_;
  std::map<int, StoredBaseline> baselines_;
  int64_t next_id_ = 0;
};

}  // namespace iowatch::probes
