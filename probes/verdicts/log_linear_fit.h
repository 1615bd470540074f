// LogLinearFit: weighted least squares of a log figure (a latency, a
// throughput) on a few regressors that measure stresses (load, steal, ...),
// each slope constrained to one sign, a stress given a slope only where the
// points spread over it, and never a line extrapolated: the machinery of
// the probes' load model (load_model.h says why each rule is there), shaped
// by a FitShape so that another judge (a disk's production I/O, judged by
// its own load) fits its own regressors the same way.
//
// Regressors are a fixed array of kMaxRegressors; a shape uses the first
// `regressors` of them, the rest stay 0.
// Thread-safety: plain values and pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace iowatch::probes {

inline constexpr size_t kMaxRegressors = 8;
using Regressors = std::array<double, kMaxRegressors>;
using RegressorSet = std::array<bool, kMaxRegressors>;

// What a stress needs before it gets a slope, in the units of the regressor
// that measures it (`regressor`): the points span at least `spread`, and at
// least FitShape::points_away of them lie `away` or more inside either end of
// what they span (a slope is the difference between the points at the two
// ends, so both ends need several points, not one odd one).
struct SlopeNeed {
  size_t regressor = 0;
  double spread = 0;
  double away = 0;
};

struct FitShape {
  size_t regressors = 0;  // used, ≤ kMaxRegressors
  // The stress each regressor measures (index into `needs`): whether a
  // stress gets a slope, and how far outside the points a prediction may go,
  // is decided per stress, so two regressors of one stress (a curve that
  // bends) stand or fall together.
  std::array<size_t, kMaxRegressors> stress_of{};
  std::vector<SlopeNeed> needs;  // one per stress
  std::vector<std::string_view> stress_names;
  // Which regressor to leave out, in order, when the points' regressors are
  // collinear and cannot be told apart.
  std::vector<size_t> drop_when_collinear;
  size_t points_away = 5;
  // How far beyond what the points cover a prediction may go, as a share of
  // the covered range, for a stress with a slope (none for one without).
  double margin_share = 0.1;
  // Whether a stress without a slope covers only what points_away points
  // vouch for (CoveredRange): where a few windows of a rare load would
  // otherwise stretch what the fit is trusted for without teaching it that
  // load's effect.
  bool cover_by_points_away = false;
};

// The smallest and largest of each regressor over the points.
struct Range {
  Regressors lo{};
  Regressors hi{};
};

struct Fit {
  double intercept = 0;
  Regressors slope{};
  RegressorSet use{};
  Regressors mean{};
  // The centred (weighted) cross-products of the regressors used, for the
  // curve's own uncertainty at a point (Leverage).
  std::array<Regressors, kMaxRegressors> cross{};
  size_t points = 0;
  double weight = 0;  // the points' summed weight
  double spread = 0;  // of the residuals, in log units (RobustSpread)
};

// Where to predict for a point at `at` (WhereToPredict): `at`, each stress
// lighter than every point's raised to the lightest they cover; `outside`:
// the stress in which `at` lies beyond what the points cover (nothing is
// predicted then).
struct PredictionPoint {
  Regressors at{};
  std::optional<size_t> outside;
};

Range RangeOf(std::span<const Regressors> x, const FitShape& shape);
// The regressors the points spread over enough to learn a slope (SlopeNeed).
RegressorSet SlopesAllowed(std::span<const Regressors> x, const Range& r, const FitShape& shape);
// The fit of y on the regressors `use` allows, slopes of the wrong sign
// (`sign` +1: must not be negative, −1: must not be positive) dropped one
// at a time, collinear ones by the shape's order; the regressors of
// `either_sign` keep a slope of either sign. `weights`: one per point, or
// empty for all 1. nullopt when nothing can be solved.
std::optional<Fit> FitConstrained(std::span<const Regressors> x, std::span<const double> y,
                                  std::span<const double> weights, double sign, RegressorSet use,
                                  const FitShape& shape, RegressorSet either_sign = {});
double Predict(const Fit& fit, const Regressors& x, const FitShape& shape);
// How much the fitted line itself is unsure at `at`, as a share of the
// residuals' variance: 1/n at the points' centre of mass, more towards the
// edges of what they cover (the leverage of a new point).
double Leverage(const Fit& fit, const Regressors& at, const FitShape& shape);
// The prediction's uncertainty at `at`, in log units: the residuals' spread
// widened by the line's own (a prediction interval's σ·√(1 + h), h the
// point's leverage: larger towards the edges of what the points cover).
double UncertaintyAt(const Fit& fit, const Regressors& at, const FitShape& shape);
// The stresses the fit has a slope for.
std::vector<bool> SlopedStresses(const Fit& fit, const FitShape& shape);
// `r` with each stress the fit has no slope for covered up to its
// points_away-th highest point plus its need's `away` (on the regressor that
// measures it; a regressor of a stress that curves follows its measure),
// below or above its highest point: a load a few points reached is as new
// to the fit as one none reached, and one within `away` of where many lie is
// as known as theirs. `r` unchanged unless shape.cover_by_points_away.
Range CoveredRange(std::span<const Regressors> x, const Range& r, const Fit& fit,
                   const FitShape& shape);
PredictionPoint WhereToPredict(const Regressors& at, const Range& r, const Fit& fit,
                               const FitShape& shape);

}  // namespace iowatch::probes
