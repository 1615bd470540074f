// ValidateRun and LimitsFor: what a run may do and when it ends, before any
// engine is involved.
#include "probes/run/run_limits.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

namespace iowatch::probes {
namespace {

using std::chrono::seconds;

constexpr uint64_t kNsPerSecond = 1'000'000'000;

JobSpec Job(uint64_t block_size) {
  JobSpec spec;
  spec.filename = "/dev/null";
  spec.block_size = block_size;
  return spec;
}

TEST(RunLimitsTest, IosComeFromTheAmountRoundedUpAndNumberIosCapsThem) {
  JobSpec spec = Job(4096);
  EXPECT_EQ(LimitsFor(spec, 10 * 4096 + 1, {}).ios, 11u) << "the region, when no size is set";
  spec.size = 8 * 4096;
  EXPECT_EQ(LimitsFor(spec, 1 << 20, {}).ios, 8u);
  spec.io_size = 3 * 4096;
  EXPECT_EQ(LimitsFor(spec, 1 << 20, {}).ios, 3u);
  spec.number_ios = 2;
  EXPECT_EQ(LimitsFor(spec, 1 << 20, {}).ios, 2u);
  spec.time_based = true;
  spec.runtime = seconds(5);
  EXPECT_EQ(LimitsFor(spec, 1 << 20, {}).ios, 2u) << "number_ios caps time_based runs too";
  spec.number_ios = 0;
  EXPECT_EQ(LimitsFor(spec, 1 << 20, {}).ios, UINT64_MAX);
}

TEST(RunLimitsTest, HardLimitIsGivenOrFollowsRampAndRuntime) {
  JobSpec spec = Job(4096);
  spec.ramp_time = seconds(2);
  EXPECT_EQ(LimitsFor(spec, 1 << 20, {}).hard_limit_ns, (2 + 600) * kNsPerSecond);
  spec.runtime = seconds(30);
  const RunLimits limits = LimitsFor(spec, 1 << 20, {});
  EXPECT_EQ(limits.ramp_ns, 2 * kNsPerSecond);
  EXPECT_EQ(limits.runtime_ns, 30 * kNsPerSecond);
  EXPECT_EQ(limits.hard_limit_ns, (2 + 30 + 10) * kNsPerSecond);
  EXPECT_EQ(LimitsFor(spec, 1 << 20, seconds(7)).hard_limit_ns, 7 * kNsPerSecond);
}

TEST(RunLimitsTest, ValidateRunNamesWhatCannotWork) {
  RunTarget target{.region_offset = 0, .region_size = 1 << 20, .offset_alignment = 512};
  EXPECT_TRUE(ValidateRun(Job(4096), target));
  EXPECT_FALSE(ValidateRun(Job(0), target));
  EXPECT_FALSE(ValidateRun(Job(uint64_t{1} << 32), target));
  JobSpec no_depth = Job(4096);
  no_depth.iodepth = 0;
  EXPECT_FALSE(ValidateRun(no_depth, target));
  EXPECT_FALSE(ValidateRun(Job(2 << 20), target)) << "no whole block in the region";
  const auto misaligned = ValidateRun(Job(1000), target);
  ASSERT_FALSE(misaligned);
  EXPECT_EQ(misaligned.error().message,
            "bs=1000 and offset=0 must be multiples of 512 bytes on this target");
}

}  // namespace
}  // namespace iowatch::probes
