#include "common/memo.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace iowatch {
namespace {

TEST(Memo, ComputesOnceAndKeepsTheValue) {
  Memo<int> memo;
  int calls = 0;
  EXPECT_EQ(memo.Get([&] { return ++calls * 10; }), 10);
  EXPECT_EQ(memo.Get([&] { return ++calls * 10; }), 10);
  EXPECT_EQ(calls, 1);
}

TEST(Memo, ACopyOrAnAssignmentStartsEmpty) {
  Memo<int> memo;
  (void)memo.Get([] { return 1; });
  Memo<int> copy = memo;
  EXPECT_EQ(copy.Get([] { return 2; }), 2);
  Memo<int> assigned;
  (void)assigned.Get([] { return 3; });
  assigned = memo;
  EXPECT_EQ(assigned.Get([] { return 4; }), 4);
  EXPECT_EQ(memo.Get([] { return 5; }), 1);
}

TEST(Memo, ConcurrentReadersComputeOnce) {
  Memo<int> memo;
  std::atomic<int> calls{0};
  std::vector<std::thread> readers;
  std::atomic<int> sum{0};
  for (int i = 0; i < 8; ++i) {
    readers.emplace_back([&] { sum += memo.Get([&] { return ++calls; }); });
  }
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(sum.load(), 8);
}

}  // namespace
}  // namespace iowatch
