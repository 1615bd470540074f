#include "probes/verdicts/log_linear_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace iowatch::probes {
namespace {

// Two stresses of one regressor each, both slopes positive.
FitShape TwoStresses() {
  return FitShape{
      .regressors = 2,
      .stress_of = {0, 1},
      .needs = {{0, 1.0, 0.5}, {1, 1.0, 0.5}},
      .stress_names = {"rate", "other"},
      .drop_when_collinear = {1, 0},
      .points_away = 5,
      .margin_share = 0.1,
  };
}

// y = 1 + 0.5·x0 + 0.25·x1 over a grid, with a little noise.
void Grid(std::vector<Regressors>& x, std::vector<double>& y) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(0, 0.01);
  for (int a = 0; a <= 8; ++a) {
    for (int b = 0; b <= 4; ++b) {
      x.push_back(Regressors{a * 0.5, b * 0.5});
      y.push_back(1 + 0.5 * a * 0.5 + 0.25 * b * 0.5 + noise(rng));
    }
  }
}

TEST(LogLinearFit, FitsEachStressItsOwnSlope) {
  const FitShape shape = TwoStresses();
  std::vector<Regressors> x;
  std::vector<double> y;
  Grid(x, y);
  const Range range = RangeOf(x, shape);
  const RegressorSet allowed = SlopesAllowed(x, range, shape);
  ASSERT_TRUE(allowed[0] && allowed[1]);
  const std::optional<Fit> fit = FitConstrained(x, y, {}, 1, allowed, shape);
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->slope[0], 0.5, 0.01);
  EXPECT_NEAR(fit->slope[1], 0.25, 0.01);
  EXPECT_NEAR(fit->spread, 0.01, 0.005);
  EXPECT_NEAR(Predict(*fit, Regressors{2, 1}, shape), 2.25, 0.01);
  // The line's own uncertainty grows towards the edges of what it covers.
  EXPECT_LT(UncertaintyAt(*fit, fit->mean, shape), UncertaintyAt(*fit, range.hi, shape));
}

// A weight is a point counted that many times: a point of weight 3 fits as
// three copies of it do, and one of weight 0 not at all.
TEST(LogLinearFit, AWeightCountsAPointThatManyTimes) {
  const FitShape shape = TwoStresses();
  std::vector<Regressors> x;
  std::vector<double> y;
  Grid(x, y);
  std::vector<double> weights(y.size(), 1);
  weights[3] = 3;
  std::vector<Regressors> copies = x;
  std::vector<double> copied = y;
  for (int i = 0; i < 2; ++i) {
    copies.push_back(x[3]);
    copied.push_back(y[3]);
  }
  x.push_back(Regressors{4, 2});
  y.push_back(100);  // wild, weight 0
  weights.push_back(0);
  const RegressorSet both = {true, true};
  const std::optional<Fit> weighted = FitConstrained(x, y, weights, 1, both, shape);
  const std::optional<Fit> repeated = FitConstrained(copies, copied, {}, 1, both, shape);
  ASSERT_TRUE(weighted && repeated);
  EXPECT_NEAR(weighted->slope[0], repeated->slope[0], 1e-9);
  EXPECT_NEAR(weighted->slope[1], repeated->slope[1], 1e-9);
  EXPECT_NEAR(weighted->intercept, repeated->intercept, 1e-9);
  EXPECT_NEAR(weighted->weight, static_cast<double>(copies.size()), 1e-9);
}

// A slope of the wrong sign is dropped and the rest refitted; a stress the
// points do not spread over gets none, and nothing is predicted above it.
TEST(LogLinearFit, AWrongSignIsDroppedAndAnUncoveredStressIsNotExtrapolated) {
  const FitShape shape = TwoStresses();
  std::vector<Regressors> x;
  std::vector<double> y;
  for (int a = 0; a <= 8; ++a) {
    for (int b = 0; b <= 4; ++b) {
      x.push_back(Regressors{a * 0.5, b * 0.5});
      y.push_back(1 + 0.5 * a * 0.5 - 0.2 * b * 0.5);  // faster under "other": noise
    }
  }
  const Range range = RangeOf(x, shape);
  const std::optional<Fit> fit = FitConstrained(x, y, {}, 1, {true, true}, shape);
  ASSERT_TRUE(fit);
  EXPECT_FALSE(fit->use[1]);
  EXPECT_EQ(fit->slope[1], 0);
  EXPECT_NEAR(fit->slope[0], 0.5, 1e-9);
  // "other" has no slope: no margin above it; "rate" has one: a tenth.
  EXPECT_EQ(WhereToPredict(Regressors{4.3, 2}, range, *fit, shape).outside, std::nullopt);
  EXPECT_EQ(WhereToPredict(Regressors{4.5, 2}, range, *fit, shape).outside, 0u);
  EXPECT_EQ(WhereToPredict(Regressors{1, 2.01}, range, *fit, shape).outside, 1u);
  // Lighter than every point: predicted at the lightest they cover.
  EXPECT_EQ(WhereToPredict(Regressors{-1, 0}, range, *fit, shape).at[0], 0);

  // Points all at one "other" value: no slope allowed for it.
  std::vector<Regressors> flat;
  for (int a = 0; a <= 8; ++a) flat.push_back(Regressors{a * 0.5, 1});
  for (int a = 0; a <= 8; ++a) flat.push_back(Regressors{a * 0.5, 1});
  const RegressorSet allowed = SlopesAllowed(flat, RangeOf(flat, shape), shape);
  EXPECT_TRUE(allowed[0]);
  EXPECT_FALSE(allowed[1]);
}

}  // namespace
}  // namespace iowatch::probes
