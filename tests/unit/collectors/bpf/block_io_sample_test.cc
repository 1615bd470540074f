// The bucket layout the BPF program and iowatch share (block_io_shared.h),
// read back: slot bounds and the slot of a value agree, quantiles come from
// slot bounds, and Delta takes each counter's growth; Load names a missing
// BTF file (the one failure that needs no privilege to see).
#include "collectors/bpf/block_io_sample.h"

#include <gtest/gtest.h>

#include "collectors/bpf/block_io_program.h"

namespace iowatch::collectors::bpf {
namespace {

TEST(LatencySlots, FourPerPowerOfTwoFromOneMicrosecond) {
  EXPECT_EQ(LatencySlotOf(0), 0u);
  EXPECT_EQ(LatencySlotOf(1023), 0u);
  EXPECT_EQ(LatencySlotOf(1024), 1u);
  EXPECT_EQ(LatencySlotOf(1279), 1u);
  EXPECT_EQ(LatencySlotOf(1280), 2u);
  EXPECT_EQ(LatencySlotOf(2047), 4u);
  EXPECT_EQ(LatencySlotOf(2048), 5u);
  EXPECT_EQ(LatencySlotOf(uint64_t{1} << 35), kLatencySlots - 1);
  EXPECT_EQ(LatencySlotOf(~uint64_t{0}), kLatencySlots - 1);
  // Every slot's bounds hold exactly the values that map to it.
  for (size_t slot = 0; slot + 1 < kLatencySlots; ++slot) {
    const auto [low, high] = LatencySlotBounds(slot);
    ASSERT_TRUE(high);
    EXPECT_EQ(LatencySlotOf(low), slot);
    EXPECT_EQ(LatencySlotOf(*high - 1), slot);
    EXPECT_EQ(LatencySlotOf(*high), slot + 1);
  }
  EXPECT_FALSE(LatencySlotBounds(kLatencySlots - 1).second);
  EXPECT_EQ(kLatencySlots, 102u);  // 1 + 25 powers of two × 4 + 1
}

TEST(CoarseBuckets, OneTwoFiveFromTenMicrosecondsToTenSeconds) {
  EXPECT_EQ(CoarseLeNs(0), 10'000u);
  EXPECT_EQ(CoarseLeNs(1), 25'000u);
  EXPECT_EQ(CoarseLeNs(2), 50'000u);
  EXPECT_EQ(CoarseLeNs(IOWATCH_COARSE_BOUNDS - 1), 10'000'000'000u);
  for (size_t i = 1; i < IOWATCH_COARSE_BOUNDS; ++i) EXPECT_GT(CoarseLeNs(i), CoarseLeNs(i - 1));
}

TEST(SizeSlots, PowersOfTwoFrom512BytesTo16MiB) {
  EXPECT_EQ(SizeSlotOf(1), 0u);
  EXPECT_EQ(SizeSlotOf(512), 0u);
  EXPECT_EQ(SizeSlotOf(513), 1u);
  EXPECT_EQ(SizeSlotOf(4096), 3u);
  EXPECT_EQ(SizeSlotUpperBytes(3), 4096u);
  EXPECT_EQ(SizeSlotOf(4097), 4u);
  EXPECT_EQ(SizeSlotOf(65536), 7u);
  EXPECT_EQ(SizeSlotOf(16 << 20), 15u);
  EXPECT_EQ(SizeSlotUpperBytes(15), uint64_t{16} << 20);
  EXPECT_EQ(SizeSlotOf((16 << 20) + 1), 16u);
  EXPECT_FALSE(SizeSlotUpperBytes(16));
}

TEST(QuantileSeconds, TheUpperBoundOfTheSlotHoldingTheRank) {
  LatencyHistogram h;
  EXPECT_FALSE(QuantileSeconds(h, 0.5));
  h.slots[LatencySlotOf(100'000)] = 99;  // 98,304–114,688 ns
  h.slots[LatencySlotOf(5'000'000)] = 1;
  EXPECT_DOUBLE_EQ(*QuantileSeconds(h, 0.5), 114'688e-9);
  EXPECT_DOUBLE_EQ(*QuantileSeconds(h, 0.99), 114'688e-9);
  EXPECT_DOUBLE_EQ(*QuantileSeconds(h, 0.999), 5'242'880e-9);  // 4,718,592–5,242,880
}

TEST(Delta, EachCountersGrowthSeriesNewSinceCountFromZero) {
  const DiskOp vda_read{254, 0, BlockOp::kRead};
  const DiskOp vda_write{254, 0, BlockOp::kWrite};
  BlockIoSample before;
  before.latency[{vda_read, BlockStage::kTotal}].count = 10;
  before.latency[{vda_read, BlockStage::kTotal}].slots[3] = 10;
  before.requests[vda_read].bytes = 40960;
  before.lost_issues = 2;
  before.errors[{KernelDev(254, 0), "read", "I/O"}] = 4;
  BlockIoSample now = before;
  now.errors[{KernelDev(254, 0), "read", "I/O"}] = 6;
  now.errors[{KernelDev(254, 0), "write", "timeout"}] = 1;
  now.latency[{vda_read, BlockStage::kTotal}].count = 15;
  now.latency[{vda_read, BlockStage::kTotal}].slots[3] = 12;
  now.latency[{vda_read, BlockStage::kTotal}].slots[4] = 3;
  now.requests[vda_read].bytes = 61440;
  now.requests[vda_write].bytes = 8192;
  now.lost_issues = 5;
  const BlockIoSample d = Delta(now, before);
  const LatencyHistogram& h = d.latency.at({vda_read, BlockStage::kTotal});
  EXPECT_EQ(h.count, 5u);
  EXPECT_EQ(h.slots[3], 2u);
  EXPECT_EQ(h.slots[4], 3u);
  EXPECT_EQ(d.requests.at(vda_read).bytes, 20480u);
  EXPECT_EQ(d.requests.at(vda_write).bytes, 8192u);
  EXPECT_EQ(d.lost_issues, 3u);
  EXPECT_EQ((d.errors.at({KernelDev(254, 0), "read", "I/O"})), 2u);
  EXPECT_EQ((d.errors.at({KernelDev(254, 0), "write", "timeout"})), 1u);
  // A program loaded again starts from 0: its counts, not a wrapped difference.
  BlockIoSample reloaded;
  reloaded.requests[vda_read].bytes = 4096;
  EXPECT_EQ(Delta(reloaded, now).requests.at(vda_read).bytes, 4096u);
}

TEST(Delta, EachSizeClassesGrowth) {
  const DiskOp vda_read{254, 0, BlockOp::kRead};
  BlockIoSample before;
  before.device_classes[vda_read][0] = {10, 1'000'000, 40960};
  before.device_classes[vda_read][2] = {1, 900'000, 262144};
  BlockIoSample now = before;
  now.device_classes[vda_read][0] = {14, 1'500'000, 57344};
  now.device_classes[vda_read][1] = {2, 600'000, 131072};
  const SizeClasses d = Delta(now, before).device_classes.at(vda_read);
  EXPECT_EQ(d[0], (SizeClassStats{4, 500'000, 16384}));
  EXPECT_EQ(d[1], (SizeClassStats{2, 600'000, 131072}));
  EXPECT_EQ(d[2], SizeClassStats{});
  EXPECT_EQ(ToString(SizeClass::kSmall), "small");
  EXPECT_EQ(ToString(SizeClass::kMedium), "medium");
  EXPECT_EQ(ToString(SizeClass::kLarge), "large");
}

TEST(BlockStatusName, AsTheKernelLogPrintsEachStatus) {
  EXPECT_EQ(BlockStatusName(10), "I/O");
  EXPECT_EQ(BlockStatusName(7), "critical medium");
  EXPECT_EQ(BlockStatusName(2), "timeout");
  EXPECT_EQ(BlockStatusName(16), "device offline");
  EXPECT_EQ(BlockStatusName(200), "status 200");  // a status newer than the table
}

TEST(DiskOp, TheKernelsDevTEncoding) {
  EXPECT_EQ(KernelDev(254, 0), 254u << 20);
  const DiskOp d = DiskOpOf(KernelDev(259, 3), 1);
  EXPECT_EQ(d.major, 259u);
  EXPECT_EQ(d.minor, 3u);
  EXPECT_EQ(d.op, BlockOp::kWrite);
  EXPECT_EQ(ToString(BlockOp::kDiscard), "discard");
  EXPECT_EQ(ToString(BlockStage::kQueue), "queue");
}

TEST(BlockIoProgram, WithoutKernelBtfTheErrorNamesTheFile) {
  const auto program = BlockIoProgram::Load({.btf = "/nonexistent/btf/vmlinux"});
  ASSERT_FALSE(program);
  EXPECT_EQ(program.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(program.error().ToString(),
            "/nonexistent/btf/vmlinux: no kernel BTF: the block-layer BPF program needs it "
            "(CONFIG_DEBUG_INFO_BTF)");
}

}  // namespace
}  // namespace iowatch::collectors::bpf
