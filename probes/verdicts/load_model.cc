#include "probes/verdicts/load_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <utility>

namespace iowatch::probes {
namespace {

// Load enters twice, as its band (log2) and as itself: two slopes that may
// not be negative make a monotone curve that can bend either way (a disk
// that barely notices light load and then saturates, or the reverse).
// Regressors: load band, load, steal, wait.
Regressors RegressorsOf(const RunStress& s) {
  return {std::log2(1 + s.load / 64), s.load / 4096, s.steal, s.wait};
}

// The stresses the regressors measure: load (its band and itself), steal,
// wait; the two load terms stand or fall together.
//
// What a stress needs before it gets a slope (SlopeNeed):
// - load: one band (a factor of two above the 64/s floor, log2 units):
//   within a band the bands' own baselines already say what the disk does;
//   away half a band.
// - steal: two points of all CPUs, away one: AtLeastAsStressed (run_stress.h)
//   counts a point of steal as the same stress (the measurement's own
//   noise), so less spread is mostly noise; a review's series had 0.002 %
//   and got a slope that put a run at 0.1 % at 592 s.
// - wait: four points of the run, away two, likewise twice AtLeastAsStressed's
//   two points.
// Five runs away: a slope is then learned from at least five runs at each
// end, whose mean shift has less than half the noise of one run's (1/√5),
// where two odd runs (one slow run and a tick of steal) used to make a slope
// of their own.
// A tenth of the covered range beyond it for a stress with a slope: the
// prediction then moves at most a tenth of what it moves across the runs.
// A stress without a slope gets none: its runs say nothing about a stress
// they never saw.
// Collinear: the two load terms when the runs saw few loads, a wait that
// followed steal; keep the one a run is more often slowed by: the load's
// band first, then steal (the load's linear term goes first, then wait).
const FitShape& RunShape() {
  static const FitShape shape{
      .regressors = 4,
      .stress_of = {0, 0, 1, 2},
      .needs = {{0, 1.0, 0.5}, {2, 0.02, 0.01}, {3, 0.04, 0.02}},
      .stress_names = {"load", "steal", "wait"},
      .drop_when_collinear = {1, 3, 2},
      .points_away = 5,
      .margin_share = 0.1,
  };
  return shape;
}

// "steal 0.1 % above the 0–0.002 % its 40 runs covered (no slope: none
// beyond them)", from the regressors (load / 4096, steal, wait).
std::string DescribeOutside(size_t stress, const Regressors& at, const Range& r, const Fit& fit) {
  const FitShape& shape = RunShape();
  const std::string how =
      SlopedStresses(fit, shape)[stress]
          ? fmt::format("more than {:g} % of that range beyond it", 100 * shape.margin_share)
          : std::string("no slope: none beyond them");
  if (stress == 0) {
    return fmt::format(
        "load {:.0f} weighted requests/s above the {:.0f}–{:.0f} its {} runs covered ({})",
        at[1] * 4096, r.lo[1] * 4096, r.hi[1] * 4096, fit.points, how);
  }
  const size_t k = stress == 1 ? 2 : 3;
  return fmt::format("{} {:.3g} % above the {:.3g}–{:.3g} % its {} runs covered ({})",
                     shape.stress_names[stress], 100 * at[k], 100 * r.lo[k], 100 * r.hi[k],
                     fit.points, how);
}

}  // namespace

namespace {

// Each (op, metric) judged and not a quantile, with the runs' regressors and
// log values, in the order first met.
struct MetricSeries {
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>,
           std::pair<std::vector<Regressors>, std::vector<double>>>
      points;
};

MetricSeries SeriesOf(std::span<const ModelPoint> points, const BaselinePolicy& policy) {
  MetricSeries series;
  for (const ModelPoint& p : points) {
    const Regressors x = RegressorsOf(p.stress);
    for (const MetricSample& m : p.metrics) {
      const MetricSpec* spec = FindMetric(m.metric);
      if (spec == nullptr || spec->quantile > 0 || !policy.Judges(*spec) || m.value <= 0) continue;
      auto key = std::make_pair(m.op, m.metric);
      auto [it, added] = series.points.try_emplace(key);
      if (added) series.order.push_back(key);
      it->second.first.push_back(x);
      it->second.second.push_back(std::log(m.value));
    }
  }
  return series;
}

// One metric's prediction at `here`: its baseline row, nothing when it could
// not be fitted, or where (`outside`) when it may not be predicted there.
struct MetricPrediction {
  std::optional<MetricBaseline> row;
  std::string outside;
};

MetricPrediction PredictMetric(const std::pair<std::string, std::string>& key,
                               std::span<const Regressors> x, std::span<const double> y,
                               const Regressors& here, const BaselinePolicy& policy) {
  MetricPrediction out;
  const MetricSpec* spec = FindMetric(key.second);
  const FitShape& shape = RunShape();
  const Range range = RangeOf(x, shape);
  const std::optional<Fit> fit = FitConstrained(x, y, {}, spec->worse == Worse::kHigher ? 1 : -1,
                                                SlopesAllowed(x, range, shape), shape);
  if (!fit) return out;
  // A line is not extrapolated: the whole run is left to the caller.
  const PredictionPoint where = WhereToPredict(here, range, *fit, shape);
  if (where.outside) {
    out.outside = DescribeOutside(*where.outside, here, range, *fit);
    return out;
  }
  const double median = std::exp(Predict(*fit, where.at, shape));
  // The spread in the metric's unit: a residual σ of s in log units is a
  // factor e^s, about s × the median for the small s of a disk. (Tried and
  // left out: the spread of the 30 runs nearest in stress, for a disk that
  // scatters more under load; on the recordings it judged 15 fewer runs of
  // 371 and removed no false alarm.)
  const double spread =
      std::max(std::expm1(UncertaintyAt(*fit, where.at, shape)), SpreadFloorFor(*spec, policy)) *
      median;
  // Inside the runs' range a prediction is within the figures they had;
  // this guard is for what no range check foresaw (never judge against
  // inf, 0 or NaN).
  if (!std::isfinite(median) || median <= 0 || !std::isfinite(spread)) {
    out.outside = fmt::format("its {} {} predicted there is not a finite figure ({:g})", key.first,
                              key.second, median);
    return out;
  }
  out.row = MetricBaseline{key.first, key.second, median, spread, 0, 0, 0};
  return out;
}

}  // namespace

ModelPrediction ModelBaselineAt(const RunStress& at, std::span<const ModelPoint> points,
                                const BaselinePolicy& policy) {
  ModelPrediction out;
  const size_t enough = std::max<size_t>(kMinModelRuns, policy.runs);
  if (points.size() < enough) return out;
  const auto [first, last] = std::ranges::minmax(points, {}, &ModelPoint::start_unix_ms);
  if (last.start_unix_ms - first.start_unix_ms < policy.min_age_ms) return out;
  const Regressors here = RegressorsOf(at);
  const MetricSeries series = SeriesOf(points, policy);
  Baseline baseline;
  for (const ModelPoint& p : points) baseline.run_ids.push_back(p.id);
  for (const auto& key : series.order) {
    const auto& [x, y] = series.points.at(key);
    if (y.size() < enough) continue;
    MetricPrediction p = PredictMetric(key, x, y, here, policy);
    if (!p.outside.empty()) {
      out.outside = std::move(p.outside);
      return out;
    }
    if (p.row) baseline.metrics.push_back(std::move(*p.row));
  }
  if (!baseline.metrics.empty()) out.baseline = std::move(baseline);
  return out;
}

}  // namespace iowatch::probes
