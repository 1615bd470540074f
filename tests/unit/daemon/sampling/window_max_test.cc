// WindowMax against a brute-force maximum over the same window.
#include "daemon/sampling/window_max.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <vector>

namespace iowatch::daemon {
namespace {

double NaiveMax(const std::deque<double>& last) {
  return last.empty() ? 0 : *std::max_element(last.begin(), last.end());
}

TEST(WindowMax, MatchesBruteForceOnNoisyFlatRisingAndFallingSeries) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(0, 100);
  for (const uint64_t window : {1u, 2u, 5u, 60u}) {
    WindowMax max;
    std::deque<double> last;
    for (uint64_t tick = 1; tick <= 2000; ++tick) {
      // Phases of 250 ticks: noisy, flat, rising, falling (the queue fills up).
      const uint64_t phase = (tick / 250) % 4;
      const double t = static_cast<double>(tick);
      const double value = phase == 0 ? noise(rng) : phase == 1 ? 3 : phase == 2 ? t : 1e6 - t;
      max.Push(tick, value, window);
      last.push_back(value);
      if (last.size() > window) last.pop_front();
      ASSERT_EQ(max.Max(), NaiveMax(last)) << "window " << window << " tick " << tick;
    }
  }
}

TEST(WindowMax, CopiesAndMovesKeepTheQueue) {
  WindowMax a;
  for (uint64_t tick = 1; tick <= 10; ++tick) a.Push(tick, 100.0 - static_cast<double>(tick), 8);
  WindowMax copy(a);
  std::vector<WindowMax> many(3, a);
  WindowMax moved(std::move(many[0]));
  for (WindowMax* w : {&a, &copy, &many[1], &moved}) {
    EXPECT_EQ(w->Max(), 97);  // ticks 3..10 remain
    w->Push(11, 0, 8);
    EXPECT_EQ(w->Max(), 96);
  }
  WindowMax empty;
  EXPECT_EQ(empty.Max(), 0);
  empty = copy;
  EXPECT_EQ(empty.Max(), 96);
}

}  // namespace
}  // namespace iowatch::daemon
