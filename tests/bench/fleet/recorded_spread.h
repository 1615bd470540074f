// RecordedSpread: the run-to-run spread of this machine's own probe, read from
// a recording of the daemon's store (tests/bench/verdicts/recordings, made by
// record.py): each clean run's mean latency over the median of them all, a
// factor a simulated run's latency is multiplied by, drawn with replacement.
// The quiet recording's drift (its virtual disk wandered between 11,000 and
// 15,800 QD1 IOPS over 30 minutes) is part of the spread on purpose: a fleet
// run every 15 minutes sees that wander as run-to-run noise.
// Its runs' histograms also give one request's spread: the median over the
// clean runs of the coefficient of variation a lognormal with the run's p50
// and p99 has (the passive judge's windows: passive_timeline.h).
// Thread-safety: const after Load; Draw takes the caller's generator.
#pragma once

#include <filesystem>
#include <random>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace iowatch::fleet {

class RecordedSpread {
 public:
  // The clean successful runs of `job` in the store at `db`, which is opened
  // read-write (an older recording's schema is migrated): pass a copy.
  static Result<RecordedSpread> Load(const std::filesystem::path& db, std::string_view job);

  double Draw(std::mt19937_64& rng) const {
    return factors_[std::uniform_int_distribution<size_t>(0, factors_.size() - 1)(rng)];
  }
  size_t Runs() const { return factors_.size(); }
  // 1.4826 × the median absolute deviation of the log factors: a robust σ.
  double LogSigma() const;
  double Min() const;
  double Max() const;
  // One request's latency: σ over mean, the median over the runs.
  double RequestCv() const { return request_cv_; }

 private:
  std::vector<double> factors_;
  double request_cv_ = 0;
};

}  // namespace iowatch::fleet
