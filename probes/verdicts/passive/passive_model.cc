#include "probes/verdicts/passive/passive_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <utility>
#include <vector>

#include "probes/verdicts/baseline.h"

namespace iowatch::probes {
namespace {

constexpr double kOtherBytesUnit = 16.0 * 1024 * 1024;  // 16 MiB/s
constexpr double kSizeUnit = 4096;
constexpr size_t kRateBand = 0;  // the regressor log2(1 + rate/64)

// Regressors: the rate's band and the rate itself (a monotone curve that
// may bend either way), the other I/O's band, steal, the size's octave.
Regressors RegressorsOf(double rate, double other_bytes_rate, double mean_bytes, double steal) {
  return {std::log2(1 + rate / 64), rate / 4096, std::log2(1 + other_bytes_rate / kOtherBytesUnit),
          steal, std::log2(std::max(mean_bytes, 512.0) / kSizeUnit)};
}

Regressors RegressorsOf(const PassivePoint& p) {
  return RegressorsOf(p.rate, p.other_bytes_rate, p.mean_bytes, p.steal);
}

// A stress gets a slope where the windows spread over a factor of two of it
// (a point of steal for steal), with ten windows half of that inside either
// end; windows are many and each says little, so ten rather than the
// probes' five. Collinear: the rate's linear term goes first, then the size,
// the other I/O, steal.
const FitShape& WindowShape() {
  static const FitShape shape{
      .regressors = 5,
      .stress_of = {0, 0, 1, 2, 3},
      .needs = {{0, 1.0, 0.5}, {2, 1.0, 0.5}, {3, 0.02, 0.01}, {4, 1.0, 0.5}},
      .stress_names = {"rate", "other I/O", "steal", "request size"},
      .drop_when_collinear = {1, 4, 2, 3},
      .points_away = 10,
      .margin_share = 0.1,
      .cover_by_points_away = true,
  };
  return shape;
}

// Least squares of the squared residuals, each clipped at `clip` times its
// window's σ under `terms` (none when clip is 0), on 1/n; both terms at
// least 0.
std::pair<double, double> FitVarianceTerms(std::span<const double> residuals,
                                           std::span<const double> inverse_n,
                                           std::pair<double, double> terms, double clip) {
  const auto count = static_cast<double>(residuals.size());
  std::vector<double> z;
  z.reserve(residuals.size());
  double mean_z = 0;
  double mean_u = 0;
  for (size_t i = 0; i < residuals.size(); ++i) {
    const double limit = clip * std::sqrt(terms.first + terms.second * inverse_n[i]);
    const double r = clip > 0 ? std::clamp(residuals[i], -limit, limit) : residuals[i];
    z.push_back(r * r);
    mean_z += r * r / count;
    mean_u += inverse_n[i] / count;
  }
  double cov = 0;
  double var = 0;
  for (size_t i = 0; i < residuals.size(); ++i) {
    cov += (z[i] - mean_z) * (inverse_n[i] - mean_u);
    var += (inverse_n[i] - mean_u) * (inverse_n[i] - mean_u);
  }
  double c2 = var > 0 ? std::max(0.0, cov / var) : 0;
  double sigma2 = mean_z - c2 * mean_u;
  if (sigma2 < 0) {
    sigma2 = 0;
    c2 = mean_u > 0 ? mean_z / mean_u : 0;
  }
  return {sigma2, c2};
}

// The model's own variance as a line in the load, fitted on what the
// requests' term leaves of each clipped squared residual; kept only where
// its slope stands 3 standard errors from 0 (squared residuals are noisy,
// and a disk as steady busy as idle keeps one σ²).
void FitLoadTerm(std::span<const double> residuals, std::span<const double> load,
                 std::span<const double> inverse_n, PassiveVariance& v) {
  const size_t count = residuals.size();
  if (count < 3) return;
  std::vector<double> excess;
  excess.reserve(count);
  double mean_excess = 0;
  double mean_load = 0;
  for (size_t i = 0; i < count; ++i) {
    const double limit = 4 * std::sqrt(v.sigma2 + v.c2 * inverse_n[i]);
    const double r = std::clamp(residuals[i], -limit, limit);
    excess.push_back(r * r - v.c2 * inverse_n[i]);
    mean_excess += excess.back() / static_cast<double>(count);
    mean_load += load[i] / static_cast<double>(count);
  }
  double cov = 0;
  double var = 0;
  for (size_t i = 0; i < count; ++i) {
    cov += (excess[i] - mean_excess) * (load[i] - mean_load);
    var += (load[i] - mean_load) * (load[i] - mean_load);
  }
  if (!(var > 0)) return;
  const double slope = cov / var;
  double left = 0;
  for (size_t i = 0; i < count; ++i) {
    const double e = excess[i] - mean_excess - slope * (load[i] - mean_load);
    left += e * e;
  }
  const double standard_error = std::sqrt(left / static_cast<double>(count - 2) / var);
  if (std::abs(slope) < 3 * standard_error || !(mean_excess > 0)) return;
  v.sigma2 = mean_excess;
  v.per_load = slope;
  v.load_mean = mean_load;
  // Never below a quarter of the mean's: a narrower end is what the load's
  // term is for, one narrower still is a few quiet windows.
  v.floor = mean_excess / 4;
}

// The residual variance as σ²(load) + c²/n (σ² the model's own, c² the
// requests' coefficient of variation squared): fitted on all residuals, then
// again with each clipped at 4 of its window's σ until the terms settle (a
// few rounds: each shrinks what stalled minutes add), so that one stalled
// minute in a hundred does not make the disk look noisy; then, where
// `by_load`, σ² as a line in the load.
PassiveVariance VarianceTerms(std::span<const double> residuals, std::span<const double> load,
                              std::span<const double> inverse_n, bool by_load) {
  constexpr int kRounds = 12;
  std::pair<double, double> terms = FitVarianceTerms(residuals, inverse_n, {0, 0}, 0);
  for (int round = 0; round < kRounds && terms.first + terms.second > 0; ++round) {
    const std::pair<double, double> next = FitVarianceTerms(residuals, inverse_n, terms, 4);
    const bool settled = std::abs(next.first - terms.first) <= 0.01 * terms.first &&
                         std::abs(next.second - terms.second) <= 0.01 * terms.second;
    terms = next;
    if (settled) break;
  }
  PassiveVariance v;
  v.sigma2 = terms.first;
  v.c2 = terms.second;
  if (by_load) FitLoadTerm(residuals, load, inverse_n, v);
  return v;
}

// Whether the windows' requests in flight (rate × mean latency, Little's
// law) grow with their rate: the top quarter by rate holds twice the bottom
// quarter's. A closed-loop workload keeps its queue whatever its rate, so
// there a latency that falls as the rate rises is the tautology rate =
// depth / latency, and a slower disk's fewer requests would explain its
// slowness away; an open one (requests that arrive whatever the disk does)
// may truly be faster when busy (threads kept awake, caches warm).
bool InFlightGrowsWithRate(std::span<const PassivePoint> points) {
  std::vector<std::pair<double, double>> by_rate;
  by_rate.reserve(points.size());
  for (const PassivePoint& p : points) {
    by_rate.emplace_back(p.rate, static_cast<double>(p.rate) * p.mean_seconds);
  }
  std::ranges::sort(by_rate);
  const size_t quarter = by_rate.size() / 4;
  if (quarter == 0) return false;
  double low = 0;
  double high = 0;
  for (size_t i = 0; i < quarter; ++i) {
    low += by_rate[i].second;
    high += by_rate[by_rate.size() - 1 - i].second;
  }
  return high > 2 * low;
}

std::string DescribeOutside(size_t stress, const PassiveWindow& w, const Range& r, size_t windows) {
  const FitShape& shape = WindowShape();
  switch (stress) {
    case 0:
      return fmt::format("rate {:.0f}/s above the {:.0f}–{:.0f}/s its {} windows covered", w.rate,
                         (std::exp2(r.lo[0]) - 1) * 64, (std::exp2(r.hi[0]) - 1) * 64, windows);
    case 1:
      return fmt::format(
          "other I/O {:.1f} MB/s above the {:.1f}–{:.1f} MB/s its {} windows covered",
          w.other_bytes_rate / 1e6, (std::exp2(r.lo[2]) - 1) * kOtherBytesUnit / 1e6,
          (std::exp2(r.hi[2]) - 1) * kOtherBytesUnit / 1e6, windows);
    case 2:
      return fmt::format("steal {:.3g} % above the {:.3g}–{:.3g} % its {} windows covered",
                         100 * w.steal, 100 * r.lo[3], 100 * r.hi[3], windows);
    default:
      return fmt::format("{} {:.0f} bytes above the {:.0f}–{:.0f} its {} windows covered",
                         shape.stress_names[stress], w.mean_bytes, std::exp2(r.lo[4]) * kSizeUnit,
                         std::exp2(r.hi[4]) * kSizeUnit, windows);
  }
}

}  // namespace

bool Learnable(const PassiveWindow& w, const PassivePolicy& policy) {
  return w.requests >= std::max<uint64_t>(policy.min_requests, 1) && !w.probe &&
         !w.counters_reset && w.mean_seconds > 0 && std::isfinite(w.mean_seconds);
}

PassivePoint PointOf(const PassiveWindow& w) {
  return PassivePoint{
      .start_ms = w.start_ms,
      .end_ms = w.end_ms,
      .rate = static_cast<float>(w.rate),
      .other_bytes_rate = static_cast<float>(w.other_bytes_rate),
      .mean_bytes = static_cast<float>(w.mean_bytes),
      .steal = static_cast<float>(w.steal),
      .mean_seconds = static_cast<float>(w.mean_seconds),
      .requests = static_cast<uint32_t>(std::min<uint64_t>(w.requests, UINT32_MAX))};
}

std::optional<PassiveModel> PassiveModel::Learn(std::span<const PassiveWindow> windows,
                                                const PassivePolicy& policy) {
  std::vector<PassivePoint> points;
  for (const PassiveWindow& w : windows) {
    if (Learnable(w, policy)) points.push_back(PointOf(w));
  }
  return Learn(points, policy);
}

std::optional<PassiveModel> PassiveModel::Learn(std::span<const PassivePoint> points,
                                                const PassivePolicy& policy) {
  std::vector<Regressors> x;
  std::vector<double> y;
  std::vector<double> inverse_n;
  std::vector<PassivePoint> kept;
  PassiveModel model;
  model.first_ms_ = INT64_MAX;
  model.last_ms_ = INT64_MIN;
  for (const PassivePoint& p : points) {
    if (p.requests == 0 || !(p.mean_seconds > 0)) continue;
    kept.push_back(p);
    x.push_back(RegressorsOf(p));
    y.push_back(std::log(static_cast<double>(p.mean_seconds)));
    inverse_n.push_back(1.0 / static_cast<double>(p.requests));
    model.first_ms_ = std::min(model.first_ms_, p.start_ms);
    model.last_ms_ = std::max(model.last_ms_, p.end_ms);
  }
  if (y.size() < std::max<size_t>(policy.min_windows, 2) ||
      model.last_ms_ - model.first_ms_ < policy.min_span_ms) {
    return std::nullopt;
  }
  const FitShape& shape = WindowShape();
  model.range_ = RangeOf(x, shape);
  const RegressorSet allowed = SlopesAllowed(x, model.range_, shape);
  // The rate's band may fall only where the I/O is open (the linear term,
  // queueing at high rates, still only rises).
  RegressorSet either_sign{};
  either_sign[kRateBand] = allowed[kRateBand] && InFlightGrowsWithRate(kept);
  const std::optional<Fit> first = FitConstrained(x, y, {}, 1, allowed, shape, either_sign);
  if (!first) return std::nullopt;
  std::vector<double> residuals;
  std::vector<double> load;
  residuals.reserve(y.size());
  load.reserve(y.size());
  for (size_t i = 0; i < y.size(); ++i) {
    residuals.push_back(y[i] - Predict(*first, x[i], shape));
    load.push_back(x[i][kRateBand]);
  }
  // A disk busy part of the time may be steadier busy than idle (or the
  // reverse): where the windows spread over the rate, the variance follows it.
  const PassiveVariance variance = VarianceTerms(residuals, load, inverse_n, allowed[kRateBand]);
  // Each window weighted by its share of the model's own variance, so that
  // a minute of 50 requests counts less than one of 5,000.
  std::vector<double> weights;
  weights.reserve(inverse_n.size());
  for (size_t i = 0; i < inverse_n.size(); ++i) {
    const double v = variance.At(load[i], inverse_n[i]);
    weights.push_back(variance.sigma2 > 0 && v > 0 ? variance.sigma2 / v : 1.0);
  }
  std::optional<Fit> fit = FitConstrained(x, y, weights, 1, allowed, shape, either_sign);
  if (!fit) return std::nullopt;
  fit->spread = std::sqrt(variance.sigma2);
  model.range_ = CoveredRange(x, model.range_, *fit, shape);
  model.fit_ = *fit;
  model.variance_ = variance;
  return model;
}

PassivePrediction PassiveModel::At(const PassiveWindow& w, const PassivePolicy& policy) const {
  const FitShape& shape = WindowShape();
  PassivePrediction out;
  // Through the points' float figures, as the covered range was: a window at
  // the very load the model learned is inside it.
  const PredictionPoint where = WhereToPredict(RegressorsOf(PointOf(w)), range_, fit_, shape);
  if (where.outside) {
    out.outside = DescribeOutside(*where.outside, w, range_, fit_.points);
    return out;
  }
  const double mean = std::exp(Predict(fit_, where.at, shape));
  // σ²(load)·(1 + h), h the line's own uncertainty there, + c²/n.
  const double line =
      (variance_.At(where.at[kRateBand], 0)) * (1 + Leverage(fit_, where.at, shape));
  const double window = w.requests > 0 ? variance_.c2 / static_cast<double>(w.requests) : 0;
  const double sigma = std::sqrt(line + window);
  if (!std::isfinite(mean) || mean <= 0 || !std::isfinite(sigma)) {
    out.outside = fmt::format("its prediction there is not a finite figure ({:g})", mean);
    return out;
  }
  out.mean_seconds = mean;
  out.bound_ratio = 1 + std::max(policy.tolerance, policy.spread_factor * std::expm1(sigma));
  return out;
}

}  // namespace iowatch::probes
