// RetentionClock: anchored at the store's newest run or the wall clock,
// whichever is earlier, and advanced by the monotonic clock alone.
#include "daemon/scheduling/retention_clock.h"

#include <gtest/gtest.h>

namespace iowatch::daemon {
namespace {

constexpr int64_t kDayMs = 24LL * 3600 * 1000;

TEST(RetentionClock, AnEmptyStoreStartsAtTheWallClock) {
  const RetentionClock clock(1'700'000'000'000, 5'000, std::nullopt);
  EXPECT_EQ(clock.Now(5'000), 1'700'000'000'000);
  EXPECT_EQ(clock.Now(65'000), 1'700'000'060'000);
}

TEST(RetentionClock, AWallClockAheadOfTheStoreStartsAtTheNewestRun) {
  // The wall clock reads ten years after the newest run: set wrong before
  // the daemon started (or the daemon was down that long).
  const int64_t newest = 1'700'000'000'000;
  const RetentionClock clock(newest + 3650 * kDayMs, 0, newest);
  EXPECT_EQ(clock.Now(0), newest);
  EXPECT_EQ(clock.Now(kDayMs), newest + kDayMs);
}

TEST(RetentionClock, ARunFromTheFutureDoesNotMoveItAhead) {
  const RetentionClock clock(1'700'000'000'000, 0, 1'800'000'000'000);
  EXPECT_EQ(clock.Now(0), 1'700'000'000'000);
}

TEST(RetentionClock, IgnoresTheWallClockOnceAnchored) {
  // Nothing but the monotonic reading enters Now(): a wall clock set
  // forwards or backwards later cannot move it.
  const RetentionClock clock(1'700'000'000'000, 100, std::nullopt);
  EXPECT_EQ(clock.Now(100 + 7 * kDayMs), 1'700'000'000'000 + 7 * kDayMs);
}

}  // namespace
}  // namespace iowatch::daemon
