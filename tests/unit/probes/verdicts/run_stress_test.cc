// RunStress: which runs were at least as stressed as another, in every
// dimension, and which of them are the nearest.
#include "probes/verdicts/run_stress.h"

#include <gtest/gtest.h>

namespace iowatch::probes {
namespace {

TEST(RunStress, AtLeastAsStressedInEveryDimensionWithinTheNoise) {
  const RunStress run{1000, 0.10, 0.05, false};
  EXPECT_TRUE(AtLeastAsStressed(run, run));
  EXPECT_TRUE(AtLeastAsStressed({2000, 0.20, 0.30, true}, run));
  EXPECT_TRUE(AtLeastAsStressed({900, 0.095, 0.04, false}, run));               // within the noise
  EXPECT_FALSE(AtLeastAsStressed({800, 0.20, 0.30, false}, run));               // less load
  EXPECT_FALSE(AtLeastAsStressed({2000, 0.05, 0.30, false}, run));              // less steal
  EXPECT_FALSE(AtLeastAsStressed({2000, 0.20, 0.01, false}, run));              // less wait
  EXPECT_FALSE(AtLeastAsStressed({2000, 0.20, 0.30, false}, {0, 0, 0, true}));  // no probe beside
}

TEST(RunStress, FromConditions) {
  RunConditions c;
  c.seconds = 2;
  c.device_ios = 3000;
  c.device_bytes = 3000 * 4096;
  c.cpu_steal = 0.12;
  c.cpu_wait = 0.3;
  c.other_probe = true;
  const RunStress s = StressOf(c);
  EXPECT_NEAR(s.load, 1500 * (1 + 4096.0 / 65536), 1e-9);
  EXPECT_DOUBLE_EQ(s.steal, 0.12);
  EXPECT_DOUBLE_EQ(s.wait, 0.3);
  EXPECT_TRUE(s.other_probe);
  c.cpu_wait.reset();  // no schedstat: no wait known
  EXPECT_DOUBLE_EQ(StressOf(c).wait, 0);
}

TEST(RunStress, TheNearestHeavierRunsOverTheMinimumSpan) {
  const RunStress run{100, 0.10, 0, false};
  const std::vector<RunStress> candidates = {
      {50, 0.30, 0, false},    // 0: less load
      {100, 0.12, 0, false},   // 1: near
      {200, 0.10, 0, false},   // 2: near
      {5000, 0.40, 0, false},  // 3: far
      {100, 0.05, 0, false},   // 4: less steal
      {120, 0.11, 0, false},   // 5: nearest
  };
  const std::vector<int64_t> starts = {0, 10, 20, 30, 40, 50};
  const auto picked = PickHeavierNeighbours(run, candidates, starts, 3, 0);
  ASSERT_TRUE(picked);
  EXPECT_EQ(*picked, (std::vector<size_t>{1, 2, 5}));
  EXPECT_FALSE(PickHeavierNeighbours(run, candidates, starts, 5, 0));   // only 4 heavier
  EXPECT_FALSE(PickHeavierNeighbours(run, candidates, starts, 3, 41));  // span 40
  EXPECT_TRUE(PickHeavierNeighbours(run, candidates, starts, 4, 40));   // 1, 2, 3, 5
}

}  // namespace
}  // namespace iowatch::probes
