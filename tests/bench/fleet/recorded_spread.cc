#include "tests/bench/fleet/recorded_spread.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "probes/store/store.h"
#include "probes/verdicts/run_class.h"

namespace iowatch::fleet {
namespace {

double Median(std::vector<double> v) {
  std::ranges::nth_element(v, v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2));
  return v[v.size() / 2];
}

// The coefficient of variation of a lognormal whose median is p50 and 99th
// percentile p99 (z of 0.99: 2.3263).
double LognormalCv(double p50, double p99) {
  const double sigma = std::log(p99 / p50) / 2.3263;
  return std::sqrt(std::expm1(sigma * sigma));
}

}  // namespace

Result<RecordedSpread> RecordedSpread::Load(const std::filesystem::path& db, std::string_view job) {
  Result<probes::Store> store = probes::Store::Open(db);
  if (!store) return ErrorOf(store);
  Result<std::vector<probes::RunRecord>> runs =
      store->RecentRuns(job, "", "", std::numeric_limits<size_t>::max(), true);
  if (!runs) return ErrorOf(runs);
  std::vector<double> latencies;
  std::vector<double> cvs;
  for (const probes::RunRecord& run : *runs) {
    // Runs slowed by others are no measure of the disk's own noise.
    const probes::Classification c = probes::Classify(run.conditions, probes::ContentionPolicy{});
    if (c.run_class != probes::RunClass::kClean) continue;
    double p50 = 0;
    double p99 = 0;
    for (const probes::MetricSample& m : run.metrics) {
      if (m.op != "read" || !(m.value > 0)) continue;
      if (m.metric == "lat_mean_seconds") latencies.push_back(m.value);
      if (m.metric == "lat_p50_seconds") p50 = m.value;
      if (m.metric == "lat_p99_seconds") p99 = m.value;
    }
    if (p50 > 0 && p99 > p50) cvs.push_back(LognormalCv(p50, p99));
  }
  if (latencies.size() < 10) {
    return MakeError(ErrorCode::kParse,
                     "fewer than 10 clean runs of " + std::string(job) + " in the recording",
                     db.string());
  }
  RecordedSpread out;
  const double median = Median(latencies);
  for (double l : latencies) out.factors_.push_back(l / median);
  out.request_cv_ = cvs.empty() ? 0 : Median(std::move(cvs));
  return out;
}

double RecordedSpread::LogSigma() const {
  std::vector<double> deviations;
  for (double f : factors_) deviations.push_back(std::abs(std::log(f)));
  return 1.4826 * Median(std::move(deviations));
}

double RecordedSpread::Min() const { return *std::ranges::min_element(factors_); }
double RecordedSpread::Max() const { return *std::ranges::max_element(factors_); }

}  // namespace iowatch::fleet
