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
constexpr size_t kSlopes = 4;  // load band, load, steal, wait
using Regressors = std::array<double, kSlopes>;

Regressors RegressorsOf(const RunStress& s) {
  return {std::log2(1 + s.load / 64), s.load / 4096, s.steal, s.wait};
}

// The stresses the regressors measure: load (its band and itself), steal,
// wait. Whether a stress gets a slope, and how far outside the runs a
// prediction may go, is decided per stress: the two load terms stand or
// fall together.
constexpr size_t kStresses = 3;
constexpr std::array<size_t, kSlopes> kStressOf = {0, 0, 1, 2};
constexpr std::array<const char*, kStresses> kStressNames = {"load", "steal", "wait"};

// What a stress needs before it gets a slope, in the units of the regressor
// that measures it (`regressor`): the runs span at least `spread`, and at
// least kRunsAway of them lie `away` or more inside either end of what they
// span (a slope is the difference between the runs at the two ends, so both
// ends need several runs, not one odd one).
struct SlopeNeed {
  size_t regressor;
  double spread;
  double away;
};
// - load: one band (a factor of two above the 64/s floor, log2 units):
//   within a band the bands' own baselines already say what the disk does;
//   away half a band.
// - steal: two points of all CPUs, away one: AtLeastAsStressed (run_stress.h)
//   counts a point of steal as the same stress (the measurement's own
//   noise), so less spread is mostly noise; a review's series had 0.002 %
//   and got a slope that put a run at 0.1 % at 592 s.
// - wait: four points of the run, away two, likewise twice AtLeastAsStressed's
//   two points.
constexpr std::array<SlopeNeed, kStresses> kSlopeNeeds = {
    {{0, 1.0, 0.5}, {2, 0.02, 0.01}, {3, 0.04, 0.02}}};
// Five: a slope is then learned from at least five runs at each end, whose
// mean shift has less than half the noise of one run's (1/√5), where two odd
// runs (one slow run and a tick of steal) used to make a slope of their own.
constexpr size_t kRunsAway = 5;

// How far beyond the stresses the runs cover a prediction may go, as a share
// of the range they cover, for a stress with a slope: the prediction then
// moves at most a tenth of what it moves across the runs. A stress without a
// slope gets none: its runs say nothing about a stress they never saw.
constexpr double kMarginShare = 0.1;

// The smallest and largest of each regressor over the runs.
struct Range {
  Regressors lo{};
  Regressors hi{};
};

Range RangeOf(std::span<const Regressors> x) {
  Range r;
  for (size_t k = 0; k < kSlopes; ++k) {
    const auto [lo, hi] = std::ranges::minmax(x, {}, [k](const Regressors& p) { return p[k]; });
    r.lo[k] = lo[k];
    r.hi[k] = hi[k];
  }
  return r;
}

// The regressors the runs spread over enough to learn a slope (SlopeNeed).
std::array<bool, kSlopes> SlopesAllowed(std::span<const Regressors> x, const Range& r) {
  std::array<bool, kSlopes> allowed{};
  for (size_t s = 0; s < kStresses; ++s) {
    const SlopeNeed& need = kSlopeNeeds[s];
    const size_t k = need.regressor;
    const auto above =
        std::ranges::count_if(x, [&](const Regressors& p) { return p[k] - r.lo[k] >= need.away; });
    const auto below =
        std::ranges::count_if(x, [&](const Regressors& p) { return r.hi[k] - p[k] >= need.away; });
    const bool spread = r.hi[k] - r.lo[k] >= need.spread &&
                        std::min(above, below) >= static_cast<std::ptrdiff_t>(kRunsAway);
    for (size_t j = 0; j < kSlopes; ++j) {
      if (kStressOf[j] == s) allowed[j] = spread && r.hi[j] - r.lo[j] > 1e-9;
    }
  }
  return allowed;
}

struct Fit {
  double intercept = 0;
  Regressors slope{};
  std::array<bool, kSlopes> use{};
  Regressors mean{};
  // The centred cross-products of the regressors used, for the curve's own
  // uncertainty at a point (Leverage).
  std::array<Regressors, kSlopes> cross{};
  size_t runs = 0;
  double spread = 0;  // of the residuals, in log units
};

// Solves a·v = b for the regressors in `use` (v 0 for the others) by
// Gauss-Jordan with partial pivoting; false when a is singular there.
bool SolveLinear(std::array<Regressors, kSlopes> a, Regressors b,
                 const std::array<bool, kSlopes>& use, Regressors& v) {
  for (size_t r = 0; r < kSlopes; ++r) {
    if (use[r]) continue;
    a[r].fill(0);
    for (size_t k = 0; k < kSlopes; ++k) a[k][r] = 0;
    a[r][r] = 1;
    b[r] = 0;
  }
  for (size_t col = 0; col < kSlopes; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < kSlopes; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    }
    if (std::abs(a[pivot][col]) < 1e-12) return false;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (size_t r = 0; r < kSlopes; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (size_t c = col; c < kSlopes; ++c) a[r][c] -= f * a[col][c];
      b[r] -= f * b[col];
    }
  }
  for (size_t k = 0; k < kSlopes; ++k) v[k] = use[k] ? b[k] / a[k][k] : 0;
  return true;
}

// Least squares of y on the regressors in `use` (the others' slopes 0), by
// the normal equations on centred data; false when they are singular.
bool Solve(std::span<const Regressors> x, std::span<const double> y,
           const std::array<bool, kSlopes>& use, Fit& fit) {
  const auto n = static_cast<double>(y.size());
  fit.mean = {};
  double y_mean = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    for (size_t k = 0; k < kSlopes; ++k) fit.mean[k] += x[i][k] / n;
    y_mean += y[i] / n;
  }
  fit.cross = {};
  Regressors xy{};
  for (size_t i = 0; i < y.size(); ++i) {
    for (size_t r = 0; r < kSlopes; ++r) {
      for (size_t c = 0; c < kSlopes; ++c) {
        fit.cross[r][c] += (x[i][r] - fit.mean[r]) * (x[i][c] - fit.mean[c]);
      }
      xy[r] += (x[i][r] - fit.mean[r]) * (y[i] - y_mean);
    }
  }
  if (!SolveLinear(fit.cross, xy, use, fit.slope)) return false;
  fit.use = use;
  fit.runs = y.size();
  fit.intercept = y_mean;
  for (size_t k = 0; k < kSlopes; ++k) fit.intercept -= fit.slope[k] * fit.mean[k];
  return true;
}

double Predict(const Fit& fit, const Regressors& x) {
  double y = fit.intercept;
  for (size_t k = 0; k < kSlopes; ++k) y += fit.slope[k] * x[k];
  return y;
}

// Which regressor to leave out when the runs' regressors are collinear, in
// order: the load's linear term, the probe's wait, steal.
constexpr std::array<size_t, 3> kDropWhenCollinear = {1, 3, 2};

// The constrained fit over the regressors `allowed` (SlopesAllowed): slopes
// of the wrong sign (`sign` +1: must not be negative, −1: must not be
// positive) dropped one at a time.
std::optional<Fit> FitConstrained(std::span<const Regressors> x, std::span<const double> y,
                                  double sign, std::array<bool, kSlopes> use) {
  Fit fit;
  for (size_t round = 0; round <= kSlopes; ++round) {
    if (!Solve(x, y, use, fit)) {
      // Regressors that moved together cannot be told apart: the two load
      // terms when the runs saw few loads, a wait that followed steal. Keep
      // the one a run is more often slowed by: the load's band first, then
      // steal.
      const auto collinear = std::ranges::find_if(kDropWhenCollinear, [&](size_t k) {
        std::array<bool, kSlopes> without = use;
        without[k] = false;
        Fit trial;
        return use[k] && Solve(x, y, without, trial);
      });
      if (collinear == kDropWhenCollinear.end()) return std::nullopt;
      use[*collinear] = false;
      continue;
    }
    size_t worst = kSlopes;
    for (size_t k = 0; k < kSlopes; ++k) {
      if (use[k] && sign * fit.slope[k] < 0 &&
          (worst == kSlopes || sign * fit.slope[k] < sign * fit.slope[worst])) {
        worst = k;
      }
    }
    if (worst == kSlopes) break;
    use[worst] = false;
  }
  std::vector<double> residuals;
  residuals.reserve(y.size());
  for (size_t i = 0; i < y.size(); ++i) residuals.push_back(y[i] - Predict(fit, x[i]));
  fit.spread = RobustSpread(std::move(residuals));
  return fit;
}

// How much the fitted line itself is unsure at `at`, as a share of the
// residuals' variance: 1/n at the runs' centre of mass, more towards the
// edges of what they cover (the leverage of a new point).
double Leverage(const Fit& fit, const Regressors& at) {
  Regressors d{};
  for (size_t k = 0; k < kSlopes; ++k) d[k] = fit.use[k] ? at[k] - fit.mean[k] : 0;
  Regressors v{};
  if (!SolveLinear(fit.cross, d, fit.use, v)) return 0;
  double h = 1.0 / static_cast<double>(fit.runs);
  for (size_t k = 0; k < kSlopes; ++k) h += d[k] * v[k];
  return std::max(h, 0.0);
}

// The prediction's uncertainty at `at`, in log units: the residuals' spread
// widened by the line's own (a prediction interval's σ·√(1 + h)). Tried and
// left out: the spread of the 30 runs nearest in stress, for a disk that
// scatters more under load; on the recordings it judged 15 fewer runs of
// 371 and removed no false alarm.
double UncertaintyAt(const Fit& fit, const Regressors& at) {
  return fit.spread * std::sqrt(1 + Leverage(fit, at));
}

// Where the model predicts for a run at `at`, given what the runs cover
// (`r`): at `at`, but for a stress in which the run was lighter than every
// run, which is predicted at the lightest they cover (a healthy run is no
// worse than a more stressed one, the rule AtLeastAsStressed judges by: so
// never a line extrapolated downwards, and no false alarm from it).
// `outside` is the stress in which the run was heavier than every run by
// more than kMarginShare of the covered range where the fit has a slope for
// it, or at all where it has none: nothing is predicted then.
struct PredictionPoint {
  Regressors at{};
  std::optional<size_t> outside;
};

// The stresses the fit has a slope for (the load's if either term has one).
std::array<bool, kStresses> SlopedStresses(const Fit& fit) {
  std::array<bool, kStresses> sloped{};
  for (size_t k = 0; k < kSlopes; ++k) {
    if (fit.use[k] && fit.slope[k] != 0) sloped[kStressOf[k]] = true;
  }
  return sloped;
}

PredictionPoint WhereToPredict(const Regressors& at, const Range& r, const Fit& fit) {
  const std::array<bool, kStresses> sloped = SlopedStresses(fit);
  PredictionPoint out{at, std::nullopt};
  for (size_t k = 0; k < kSlopes; ++k) {
    const double margin = sloped[kStressOf[k]] ? kMarginShare * (r.hi[k] - r.lo[k]) : 0;
    if (at[k] > r.hi[k] + margin) {
      out.outside = kStressOf[k];
      return out;
    }
    out.at[k] = std::max(at[k], r.lo[k]);
  }
  return out;
}

// "steal 0.1 % above the 0–0.002 % its 40 runs covered (no slope: none
// beyond them)", from the regressors (load / 4096, steal, wait).
std::string DescribeOutside(size_t stress, const Regressors& at, const Range& r, const Fit& fit) {
  const std::string how =
      SlopedStresses(fit)[stress]
          ? fmt::format("more than {:g} % of that range beyond it", 100 * kMarginShare)
          : std::string("no slope: none beyond them");
  if (stress == 0) {
    return fmt::format(
        "load {:.0f} weighted requests/s above the {:.0f}–{:.0f} its {} runs covered ({})",
        at[1] * 4096, r.lo[1] * 4096, r.hi[1] * 4096, fit.runs, how);
  }
  const size_t k = stress == 1 ? 2 : 3;
  return fmt::format("{} {:.3g} % above the {:.3g}–{:.3g} % its {} runs covered ({})",
                     kStressNames[stress], 100 * at[k], 100 * r.lo[k], 100 * r.hi[k], fit.runs,
                     how);
}

}  // namespace

ModelPrediction ModelBaselineAt(const RunStress& at, std::span<const ModelPoint> points,
                                const BaselinePolicy& policy) {
  ModelPrediction out;
  const size_t enough = std::max<size_t>(kMinModelRuns, policy.runs);
  if (points.size() < enough) return out;
  const auto [first, last] = std::ranges::minmax(points, {}, &ModelPoint::start_unix_ms);
  if (last.start_unix_ms - first.start_unix_ms < policy.min_age_ms) return out;
  std::vector<Regressors> all;
  for (const ModelPoint& p : points) all.push_back(RegressorsOf(p.stress));
  const Regressors here = RegressorsOf(at);
  // Each (op, metric) judged and not a quantile, with the runs that have it.
  std::map<std::pair<std::string, std::string>,
           std::pair<std::vector<Regressors>, std::vector<double>>>
      series;
  std::vector<std::pair<std::string, std::string>> order;
  for (size_t i = 0; i < points.size(); ++i) {
    for (const MetricSample& m : points[i].metrics) {
      const MetricSpec* spec = FindMetric(m.metric);
      if (spec == nullptr || spec->quantile > 0 || !policy.Judges(*spec) || m.value <= 0) continue;
      auto key = std::make_pair(m.op, m.metric);
      auto [it, added] = series.try_emplace(key);
      if (added) order.push_back(key);
      it->second.first.push_back(all[i]);
      it->second.second.push_back(std::log(m.value));
    }
  }
  Baseline baseline;
  for (const ModelPoint& p : points) baseline.run_ids.push_back(p.id);
  for (const auto& key : order) {
    const auto& [x, y] = series.at(key);
    if (y.size() < enough) continue;
    const MetricSpec* spec = FindMetric(key.second);
    const Range range = RangeOf(x);
    const std::optional<Fit> fit =
        FitConstrained(x, y, spec->worse == Worse::kHigher ? 1 : -1, SlopesAllowed(x, range));
    if (!fit) continue;
    // A line is not extrapolated: the whole run is left to the caller.
    const PredictionPoint where = WhereToPredict(here, range, *fit);
    if (where.outside) {
      out.outside = DescribeOutside(*where.outside, here, range, *fit);
      return out;
    }
    const double median = std::exp(Predict(*fit, where.at));
    // The spread in the metric's unit: a residual σ of s in log units is a
    // factor e^s, about s × the median for the small s of a disk.
    const double spread =
        std::max(std::expm1(UncertaintyAt(*fit, where.at)), SpreadFloorFor(*spec, policy)) * median;
    // Inside the runs' range a prediction is within the figures they had;
    // this guard is for what no range check foresaw (never judge against
    // inf, 0 or NaN).
    if (!std::isfinite(median) || median <= 0 || !std::isfinite(spread)) {
      out.outside = fmt::format("its {} {} predicted there is not a finite figure ({:g})",
                                key.first, key.second, median);
      return out;
    }
    baseline.metrics.push_back(MetricBaseline{key.first, key.second, median, spread, 0, 0, 0});
  }
  if (!baseline.metrics.empty()) out.baseline = std::move(baseline);
  return out;
}

}  // namespace iowatch::probes
