#include "probes/run/in_flight_slots.h"

#include <gtest/gtest.h>

namespace iowatch::probes {
namespace {

Slot Read(uint64_t offset) { return Slot{.op = IoOp::kRead, .length = 4096, .offset = offset}; }

TEST(InFlightSlots, ACompletionFreesOnlyASlotInFlight) {
  InFlightSlots slots(2);
  const uint32_t a = slots.Take(Read(0));
  slots.AddToBatch(a);
  EXPECT_FALSE(slots.Complete(a).has_value()) << "queued, not yet submitted";
  slots.BatchSubmitted(1, 7);
  EXPECT_EQ(slots.InFlight(), 1u);
  const auto done = slots.Complete(a);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->issue_ns, 7u);
  EXPECT_EQ(slots.InFlight(), 0u);
  // A second completion of the same I/O: refused, nothing freed twice.
  EXPECT_FALSE(slots.Complete(a).has_value());
  EXPECT_EQ(slots.InFlight(), 0u);
  EXPECT_FALSE(slots.Complete(99).has_value());
  // Both slots are still distinct: two I/Os never share a buffer.
  const uint32_t x = slots.Take(Read(0));
  const uint32_t y = slots.Take(Read(4096));
  EXPECT_NE(x, y);
  EXPECT_FALSE(slots.HasFree());
}

TEST(InFlightSlots, APartialSubmitLeavesTheRestQueued) {
  InFlightSlots slots(3);
  for (uint64_t i = 0; i < 3; ++i) slots.AddToBatch(slots.Take(Read(i * 4096)));
  slots.BatchSubmitted(2, std::nullopt);
  EXPECT_EQ(slots.InFlight(), 2u);
  EXPECT_FALSE(slots.BatchEmpty());
  EXPECT_FALSE(slots.BatchFailed());
  EXPECT_TRUE(slots.BatchEmpty());
  EXPECT_EQ(slots.InFlight(), 2u);
}

}  // namespace
}  // namespace iowatch::probes
