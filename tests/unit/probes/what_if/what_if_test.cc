#include "probes/what_if/what_if.h"

#include <gtest/gtest.h>

namespace iowatch::probes {
namespace {

WhatIfFile Shape() {
  WhatIfFile f;
  f.path = "/data/f";
  f.size = 10'240'000;
  f.fsynced = true;
  f.accesses = {{true, TracedPattern::kSequential, 100, 10'240'000},
                {false, TracedPattern::kSequential, 100, 10'240'000},
                {false, TracedPattern::kRandom, 1, 102'400},
                {false, TracedPattern::kBackward, 99, 10'137'600}};
  return f;
}

TEST(WhatIf, PlansEachStepAsTracedAndLarger) {
  WhatIfSettings settings;
  settings.scratch_directory = "/data/.scratch";
  auto steps = PlanWhatIf(Shape(), settings);
  ASSERT_TRUE(steps.has_value()) << steps.error().ToString();
  ASSERT_EQ(steps->size(), 4u);
  const WhatIfStep& write = (*steps)[0];
  EXPECT_EQ(JobFingerprint(write.as_traced),
            "directory=/data/.scratch;rw=write;bs=100k;ioengine=psync;iodepth=1;direct=0;"
            "size=10m;io_size=10000k;fsync=100");
  EXPECT_EQ(JobFingerprint(write.larger),
            "directory=/data/.scratch;rw=write;bs=2m;ioengine=io_uring;iodepth=4;direct=1;"
            "size=10m;io_size=10m;fsync=5");
  const WhatIfStep& backward = (*steps)[3];
  EXPECT_EQ(backward.as_traced.rw_sequence_add, -204800);
  EXPECT_EQ(backward.larger.rw_sequence_add, -(int64_t{4} << 20));
  EXPECT_EQ(backward.as_traced.io_size, 10'137'600u);
  const WhatIfStep& random = (*steps)[2];
  EXPECT_EQ(random.larger, random.as_traced);  // prefetching does not help random reads
  EXPECT_EQ(random.as_traced.rw, RwMode::kRandRead);
  EXPECT_EQ(WhatIfProbeSize(Shape(), settings), 10u << 20);
}

TEST(WhatIf, DirectApplicationsReplayDirectWithAlignedRequests) {
  WhatIfFile f = Shape();
  f.direct = true;
  f.fsynced = false;
  f.accesses = {{false, TracedPattern::kSequential, 3, 3000}};  // 1000-byte requests
  WhatIfSettings settings;
  settings.scratch_directory = "/s";
  auto steps = PlanWhatIf(f, settings);
  ASSERT_TRUE(steps.has_value()) << steps.error().ToString();
  EXPECT_TRUE((*steps)[0].as_traced.direct);
  EXPECT_EQ((*steps)[0].as_traced.block_size, 1024u);
  EXPECT_EQ((*steps)[0].as_traced.fsync, 0u);
}

TEST(WhatIf, NothingToReplayIsAnError) {
  WhatIfFile f = Shape();
  f.accesses = {{false, TracedPattern::kSequential, 5, 0}};  // reads at end of file only
  WhatIfSettings settings;
  settings.scratch_directory = "/s";
  auto steps = PlanWhatIf(f, settings);
  ASSERT_FALSE(steps.has_value());
  EXPECT_EQ(steps.error().ToString(),
            "/data/f: no reads or writes that moved data: nothing to replay");
}

TEST(WhatIf, TotalsAndRatio) {
  std::vector<WhatIfStep> steps(2);
  steps[0].as_traced_seconds = 3;
  steps[0].larger_seconds = 1;
  steps[1].as_traced_seconds = 1;
  steps[1].larger_seconds = 1;
  const WhatIfTotals t = TotalsOf(steps);
  EXPECT_DOUBLE_EQ(t.ratio, 2.0);
  EXPECT_DOUBLE_EQ(TotalsOf({}).ratio, 0.0);
}

}  // namespace
}  // namespace iowatch::probes
