#include "probes/baseline/load_model.h"

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

// How far outside the fitted range a run may lie in each regressor: a
// quarter of a load band (and the load that makes), one point of steal,
// two of wait.
constexpr Regressors kRangeSlack = {0.25, 0.05, 0.01, 0.02};

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

// The constrained fit: slopes of the wrong sign (`sign` +1: must not be
// negative, −1: must not be positive) dropped one at a time, and regressors
// that never vary left out.
std::optional<Fit> FitConstrained(std::span<const Regressors> x, std::span<const double> y,
                                  double sign) {
  std::array<bool, kSlopes> use{};
  for (size_t k = 0; k < kSlopes; ++k) {
    const auto [lo, hi] = std::ranges::minmax(x, {}, [k](const Regressors& r) { return r[k]; });
    use[k] = hi[k] - lo[k] > 1e-9;
  }
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

bool WithinRange(const Regressors& at, std::span<const Regressors> x) {
  for (size_t k = 0; k < kSlopes; ++k) {
    const auto [lo, hi] = std::ranges::minmax(x, {}, [k](const Regressors& r) { return r[k]; });
    if (at[k] < lo[k] - kRangeSlack[k] || at[k] > hi[k] + kRangeSlack[k]) return false;
  }
  return true;
}

}  // namespace

std::optional<Baseline> ModelBaselineAt(const RunStress& at, std::span<const ModelPoint> points,
                                        const BaselinePolicy& policy) {
  const size_t enough = std::max<size_t>(kMinModelRuns, policy.runs);
  if (points.size() < enough) return std::nullopt;
  const auto [first, last] = std::ranges::minmax(points, {}, &ModelPoint::start_unix_ms);
  if (last.start_unix_ms - first.start_unix_ms < policy.min_age_ms) return std::nullopt;
  std::vector<Regressors> all;
  for (const ModelPoint& p : points) all.push_back(RegressorsOf(p.stress));
  const Regressors here = RegressorsOf(at);
  if (!WithinRange(here, all)) return std::nullopt;
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
  Baseline out;
  for (const ModelPoint& p : points) out.run_ids.push_back(p.id);
  for (const auto& key : order) {
    const auto& [x, y] = series.at(key);
    if (y.size() < enough) continue;
    const MetricSpec* spec = FindMetric(key.second);
    const std::optional<Fit> fit = FitConstrained(x, y, spec->worse == Worse::kHigher ? 1 : -1);
    if (!fit) continue;
    const double median = std::exp(Predict(*fit, here));
    // The spread in the metric's unit: a residual σ of s in log units is a
    // factor e^s, about s × the median for the small s of a disk.
    const double spread =
        std::max(std::expm1(UncertaintyAt(*fit, here)), SpreadFloorFor(*spec, policy)) * median;
    out.metrics.push_back(MetricBaseline{key.first, key.second, median, spread, 0, 0, 0});
  }
  if (out.metrics.empty()) return std::nullopt;
  return out;
}

}  // namespace iowatch::probes
