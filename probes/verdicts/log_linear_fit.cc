#include "probes/verdicts/log_linear_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "probes/verdicts/baseline.h"

namespace iowatch::probes {
namespace {

using Matrix = std::array<Regressors, kMaxRegressors>;

// Solves a·v = b for the regressors in `use` (v 0 for the others) by
// Gauss-Jordan with partial pivoting; false when a is singular there.
bool SolveLinear(Matrix a, Regressors b, const RegressorSet& use, Regressors& v) {
  for (size_t r = 0; r < kMaxRegressors; ++r) {
    if (use[r]) continue;
    a[r].fill(0);
    for (size_t k = 0; k < kMaxRegressors; ++k) a[k][r] = 0;
    a[r][r] = 1;
    b[r] = 0;
  }
  for (size_t col = 0; col < kMaxRegressors; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < kMaxRegressors; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    }
    if (std::abs(a[pivot][col]) < 1e-12) return false;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (size_t r = 0; r < kMaxRegressors; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (size_t c = col; c < kMaxRegressors; ++c) a[r][c] -= f * a[col][c];
      b[r] -= f * b[col];
    }
  }
  for (size_t k = 0; k < kMaxRegressors; ++k) v[k] = use[k] ? b[k] / a[k][k] : 0;
  return true;
}

double WeightOf(std::span<const double> weights, size_t i) {
  return weights.empty() ? 1.0 : weights[i];
}

// Weighted least squares of y on the regressors in `use` (the others'
// slopes 0), by the normal equations on centred data; false when they are
// singular.
bool Solve(std::span<const Regressors> x, std::span<const double> y,
           std::span<const double> weights, const RegressorSet& use, const FitShape& shape,
           Fit& fit) {
  const size_t n = shape.regressors;
  double total = 0;
  for (size_t i = 0; i < y.size(); ++i) total += WeightOf(weights, i);
  if (total <= 0) return false;
  fit.mean = {};
  double y_mean = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const double w = WeightOf(weights, i) / total;
    for (size_t k = 0; k < n; ++k) fit.mean[k] += w * x[i][k];
    y_mean += w * y[i];
  }
  fit.cross = {};
  Regressors xy{};
  for (size_t i = 0; i < y.size(); ++i) {
    const double w = WeightOf(weights, i);
    for (size_t r = 0; r < n; ++r) {
      for (size_t c = 0; c < n; ++c) {
        fit.cross[r][c] += w * (x[i][r] - fit.mean[r]) * (x[i][c] - fit.mean[c]);
      }
      xy[r] += w * (x[i][r] - fit.mean[r]) * (y[i] - y_mean);
    }
  }
  if (!SolveLinear(fit.cross, xy, use, fit.slope)) return false;
  fit.use = use;
  fit.points = y.size();
  fit.weight = total;
  fit.intercept = y_mean;
  for (size_t k = 0; k < n; ++k) fit.intercept -= fit.slope[k] * fit.mean[k];
  return true;
}

}  // namespace

Range RangeOf(std::span<const Regressors> x, const FitShape& shape) {
  Range r;
  if (x.empty()) return r;
  for (size_t k = 0; k < shape.regressors; ++k) {
    const auto [lo, hi] = std::ranges::minmax(x, {}, [k](const Regressors& p) { return p[k]; });
    r.lo[k] = lo[k];
    r.hi[k] = hi[k];
  }
  return r;
}

RegressorSet SlopesAllowed(std::span<const Regressors> x, const Range& r, const FitShape& shape) {
  RegressorSet allowed{};
  for (size_t s = 0; s < shape.needs.size(); ++s) {
    const SlopeNeed& need = shape.needs[s];
    const size_t k = need.regressor;
    const auto above =
        std::ranges::count_if(x, [&](const Regressors& p) { return p[k] - r.lo[k] >= need.away; });
    const auto below =
        std::ranges::count_if(x, [&](const Regressors& p) { return r.hi[k] - p[k] >= need.away; });
    const bool spread = r.hi[k] - r.lo[k] >= need.spread &&
                        std::min(above, below) >= static_cast<std::ptrdiff_t>(shape.points_away);
    for (size_t j = 0; j < shape.regressors; ++j) {
      if (shape.stress_of[j] == s) allowed[j] = spread && r.hi[j] - r.lo[j] > 1e-9;
    }
  }
  return allowed;
}

double Predict(const Fit& fit, const Regressors& x, const FitShape& shape) {
  double y = fit.intercept;
  for (size_t k = 0; k < shape.regressors; ++k) y += fit.slope[k] * x[k];
  return y;
}

std::optional<Fit> FitConstrained(std::span<const Regressors> x, std::span<const double> y,
                                  std::span<const double> weights, double sign, RegressorSet use,
                                  const FitShape& shape, RegressorSet either_sign) {
  Fit fit;
  for (size_t round = 0; round <= shape.regressors; ++round) {
    if (!Solve(x, y, weights, use, shape, fit)) {
      // Regressors that moved together cannot be told apart: keep the one
      // the shape's order leaves longest.
      const auto collinear = std::ranges::find_if(shape.drop_when_collinear, [&](size_t k) {
        RegressorSet without = use;
        without[k] = false;
        Fit trial;
        return use[k] && Solve(x, y, weights, without, shape, trial);
      });
      if (collinear == shape.drop_when_collinear.end()) return std::nullopt;
      use[*collinear] = false;
      continue;
    }
    size_t worst = shape.regressors;
    for (size_t k = 0; k < shape.regressors; ++k) {
      if (use[k] && !either_sign[k] && sign * fit.slope[k] < 0 &&
          (worst == shape.regressors || sign * fit.slope[k] < sign * fit.slope[worst])) {
        worst = k;
      }
    }
    if (worst == shape.regressors) break;
    use[worst] = false;
  }
  std::vector<double> residuals;
  residuals.reserve(y.size());
  for (size_t i = 0; i < y.size(); ++i) residuals.push_back(y[i] - Predict(fit, x[i], shape));
  fit.spread = RobustSpread(std::move(residuals));
  return fit;
}

double Leverage(const Fit& fit, const Regressors& at, const FitShape& shape) {
  Regressors d{};
  for (size_t k = 0; k < shape.regressors; ++k) d[k] = fit.use[k] ? at[k] - fit.mean[k] : 0;
  Regressors v{};
  if (!SolveLinear(fit.cross, d, fit.use, v)) return 0;
  double h = fit.weight > 0 ? 1.0 / fit.weight : 0;
  for (size_t k = 0; k < shape.regressors; ++k) h += d[k] * v[k];
  return std::max(h, 0.0);
}

double UncertaintyAt(const Fit& fit, const Regressors& at, const FitShape& shape) {
  return fit.spread * std::sqrt(1 + Leverage(fit, at, shape));
}

std::vector<bool> SlopedStresses(const Fit& fit, const FitShape& shape) {
  std::vector<bool> sloped(shape.needs.size(), false);
  for (size_t k = 0; k < shape.regressors; ++k) {
    if (fit.use[k] && fit.slope[k] != 0) sloped[shape.stress_of[k]] = true;
  }
  return sloped;
}

Range CoveredRange(std::span<const Regressors> x, const Range& r, const Fit& fit,
                   const FitShape& shape) {
  Range covered = r;
  if (!shape.cover_by_points_away || x.empty()) return covered;
  const std::vector<bool> sloped = SlopedStresses(fit, shape);
  std::vector<double> values(x.size());
  for (size_t s = 0; s < shape.needs.size(); ++s) {
    if (sloped[s]) continue;
    const SlopeNeed& need = shape.needs[s];
    const size_t k = need.regressor;
    std::ranges::transform(x, values.begin(), [k](const Regressors& p) { return p[k]; });
    const size_t rank = std::min(shape.points_away, values.size());
    const auto nth = values.end() - static_cast<std::ptrdiff_t>(rank);
    std::ranges::nth_element(values, nth);
    covered.hi[k] = *nth + need.away;
    for (size_t j = 0; j < shape.regressors; ++j) {
      if (j != k && shape.stress_of[j] == s)
        covered.hi[j] = std::numeric_limits<double>::infinity();
    }
  }
  return covered;
}

PredictionPoint WhereToPredict(const Regressors& at, const Range& r, const Fit& fit,
                               const FitShape& shape) {
  const std::vector<bool> sloped = SlopedStresses(fit, shape);
  PredictionPoint out{at, std::nullopt};
  for (size_t k = 0; k < shape.regressors; ++k) {
    const double margin = sloped[shape.stress_of[k]] ? shape.margin_share * (r.hi[k] - r.lo[k]) : 0;
    if (at[k] > r.hi[k] + margin) {
      out.outside = shape.stress_of[k];
      return out;
    }
    out.at[k] = std::max(at[k], r.lo[k]);
  }
  return out;
}

}  // namespace iowatch::probes
