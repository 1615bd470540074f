// StoreBaselineSource: one probe series' baselines and runs in the store,
// as JudgeRun (probes/verdicts/job_judge.h) reads and writes them: the
// daemon's way of judging a run, so that `iowatch baseline reset`, `capture`
// and `import` from another process take effect at the series' next run.
// Thread-safety: as the Store's (one owner).
#pragma once

#include <string>
#include <vector>

#include "probes/store/store.h"
#include "probes/verdicts/job_judge.h"

namespace iowatch::probes {

class StoreBaselineSource final : public BaselineSource {
 public:
  StoreBaselineSource(Store& store, std::string job, std::string fingerprint, std::string device)
      : store_(store),
        job_(std::move(job)),
        fingerprint_(std::move(fingerprint)),
        device_(std::move(device)) {}

  Result<std::vector<StoredBaseline>> Baselines() override {
    return store_.SeriesBaselines(job_, fingerprint_, device_);
  }
  Result<std::vector<LearningCandidate>> Candidates() override {
    return store_.SeriesCandidates(job_, fingerprint_, device_);
  }
  Result<RunRecord> Load(int64_t id) override { return store_.GetRun(id); }
  Result<std::vector<MetricSample>> LoadMetrics(int64_t id) override {
    return store_.GetRunMetrics(id);
  }
  Result<int64_t> Put(const Baseline& baseline) override { return store_.PutBaseline(baseline); }

 private:
  Store& store_;
  std::string job_;
  std::string fingerprint_;
  std::string device_;
};

}  // namespace iowatch::probes
