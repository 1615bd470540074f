#include "probes/verdicts/run_stress.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "probes/verdicts/run_class.h"

namespace iowatch::probes {
namespace {

constexpr double kLoadSlackShare = 0.9;
constexpr double kLoadSlackRequests = 5;
constexpr double kStealSlack = 0.01;
constexpr double kWaitSlack = 0.02;
// ExtraStress's units: a band of load is a factor of two above this floor
// (so that 0 and 10 requests per second are near each other), and the
// default limits of a clean run for steal and wait.
constexpr double kLoadFloor = 64;
constexpr double kStealUnit = 0.05;
constexpr double kWaitUnit = 0.25;

double Finite(double value) { return std::isfinite(value) ? value : 0; }

}  // namespace

RunStress StressOf(const RunConditions& c) {
  RunStress s;
  s.load = Finite(ForeignLoad(c));
  s.steal = Finite(c.cpu_steal);
  s.wait = c.cpu_wait ? Finite(*c.cpu_wait) : 0;
  s.other_probe = c.other_probe;
  return s;
}

bool AtLeastAsStressed(const RunStress& heavier, const RunStress& run) {
  return heavier.load >= kLoadSlackShare * run.load - kLoadSlackRequests &&
         heavier.steal >= run.steal - kStealSlack && heavier.wait >= run.wait - kWaitSlack &&
         (heavier.other_probe || !run.other_probe);
}

double ExtraStress(const RunStress& heavier, const RunStress& run) {
  const double load = std::log2((heavier.load + kLoadFloor) / (run.load + kLoadFloor));
  return std::abs(load) + std::abs(heavier.steal - run.steal) / kStealUnit +
         std::abs(heavier.wait - run.wait) / kWaitUnit +
         (heavier.other_probe != run.other_probe ? 1 : 0);
}

std::optional<std::vector<size_t>> PickHeavierNeighbours(const RunStress& run,
                                                         std::span<const RunStress> candidates,
                                                         std::span<const int64_t> start_unix_ms,
                                                         size_t runs, int64_t min_age_ms) {
  const size_t want = std::max<size_t>(runs, 1);
  std::vector<size_t> heavier;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (AtLeastAsStressed(candidates[i], run)) heavier.push_back(i);
  }
  if (heavier.size() < want) return std::nullopt;
  // The nearest first; among equally near, the newer (the disk as it is now).
  std::ranges::stable_sort(heavier, [&](size_t a, size_t b) {
    const double da = ExtraStress(candidates[a], run);
    const double db = ExtraStress(candidates[b], run);
    return da != db ? da < db : a > b;
  });
  // As few of the nearest as make `want` runs over min_age_ms ...
  std::vector<size_t> nearest;
  int64_t oldest = 0;
  int64_t newest = 0;
  for (size_t i : heavier) {
    oldest = nearest.empty() ? start_unix_ms[i] : std::min(oldest, start_unix_ms[i]);
    newest = nearest.empty() ? start_unix_ms[i] : std::max(newest, start_unix_ms[i]);
    nearest.push_back(i);
    if (nearest.size() >= want && newest - oldest >= min_age_ms) break;
  }
  if (newest - oldest < min_age_ms) return std::nullopt;
  // ... and of them, `want` spread evenly over their time (PickLearningRuns).
  std::ranges::sort(nearest);
  std::vector<size_t> picked;
  picked.reserve(want);
  const size_t n = nearest.size();
  for (size_t i = 0; i < want; ++i) {
    picked.push_back(nearest[want == 1 ? n - 1 : (i * (n - 1) + (want - 1) / 2) / (want - 1)]);
  }
  return picked;
}

}  // namespace iowatch::probes
