// SetAsideUncorroborated: a verdict stays bad only if the run is also bad
// against what the series' first day predicts at its stress.
#include "probes/verdicts/corroboration.h"

#include <gtest/gtest.h>

namespace iowatch::probes {
namespace {

// The reference's prediction at the run's stress: 1000 IOPS, a 1 ms mean.
Baseline FirstDayAtTheRunsStress() {
  Baseline b;
  b.metrics = {{"read", "iops", 1000, 100, 0, 0, 0},
               {"read", "lat_mean_seconds", 1e-3, 1e-4, 0, 0, 0}};
  return b;
}

MetricVerdict MarkedBad(std::string metric, double value) {
  MetricVerdict v;
  v.op = "read";
  v.metric = std::move(metric);
  v.value = value;
  v.bad = true;
  return v;
}

TEST(Corroboration, ABadRunTheFirstDayFindsOrdinaryIsNotBad) {
  // 850 IOPS: 30 % below a band baseline that learned a lucky 1,215, 15 %
  // below what the first day predicts (30 % allowed: three spreads of 10 %).
  const std::vector<MetricSample> run = {{"read", "iops", 850},
                                         {"read", "lat_mean_seconds", 1.18e-3}};
  std::vector<MetricVerdict> verdicts = {MarkedBad("iops", 850)};
  SetAsideUncorroborated(FirstDayAtTheRunsStress(), run, BaselinePolicy{}, verdicts);
  EXPECT_FALSE(verdicts[0].bad);
  EXPECT_NE(verdicts[0].note.find("not than the series' first day at the run's stress (iops "
                                  "0.85x of it, 30 % allowed)"),
            std::string::npos)
      << verdicts[0].note;
}

TEST(Corroboration, ADiskSlowerThanBothStaysBad) {
  const std::vector<MetricSample> run = {{"read", "iops", 650},
                                         {"read", "lat_mean_seconds", 1.6e-3}};
  std::vector<MetricVerdict> verdicts = {MarkedBad("iops", 650),
                                         MarkedBad("lat_mean_seconds", 1.6e-3)};
  SetAsideUncorroborated(FirstDayAtTheRunsStress(), run, BaselinePolicy{}, verdicts);
  EXPECT_TRUE(verdicts[0].bad);
  EXPECT_TRUE(verdicts[1].bad);  // 1.6x against 50 % allowed
  EXPECT_TRUE(verdicts[0].note.empty());
}

TEST(Corroboration, AMiddleQuantileIsCheckedThroughTheMeanTheTailIsNot) {
  // p50 and p99 marked bad; the mean is 1.3x the first day's (50 % allowed).
  const std::vector<MetricSample> ordinary = {{"read", "lat_mean_seconds", 1.3e-3},
                                              {"read", "lat_p50_seconds", 1.5e-3},
                                              {"read", "lat_p99_seconds", 9e-3}};
  std::vector<MetricVerdict> verdicts = {MarkedBad("lat_p50_seconds", 1.5e-3),
                                         MarkedBad("lat_p99_seconds", 9e-3)};
  SetAsideUncorroborated(FirstDayAtTheRunsStress(), ordinary, BaselinePolicy{}, verdicts);
  EXPECT_FALSE(verdicts[0].bad);
  EXPECT_NE(verdicts[0].note.find("lat_mean_seconds 1.30x"), std::string::npos) << verdicts[0].note;
  EXPECT_TRUE(verdicts[1].bad);

  const std::vector<MetricSample> slower = {{"read", "lat_mean_seconds", 1.7e-3},
                                            {"read", "lat_p50_seconds", 1.8e-3}};
  std::vector<MetricVerdict> p50 = {MarkedBad("lat_p50_seconds", 1.8e-3)};
  SetAsideUncorroborated(FirstDayAtTheRunsStress(), slower, BaselinePolicy{}, p50);
  EXPECT_TRUE(p50[0].bad);
}

TEST(Corroboration, WhatTheReferenceDoesNotPredictStaysAsJudged) {
  // A write op, and a run without the mean: nothing to check against.
  const std::vector<MetricSample> run = {{"write", "iops", 100}, {"read", "lat_p50_seconds", 5e-3}};
  std::vector<MetricVerdict> verdicts = {MarkedBad("iops", 100),
                                         MarkedBad("lat_p50_seconds", 5e-3)};
  verdicts[0].op = "write";
  SetAsideUncorroborated(FirstDayAtTheRunsStress(), run, BaselinePolicy{}, verdicts);
  EXPECT_TRUE(verdicts[0].bad);
  EXPECT_TRUE(verdicts[1].bad);
}

}  // namespace
}  // namespace iowatch::probes
