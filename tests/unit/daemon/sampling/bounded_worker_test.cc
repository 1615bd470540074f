// BoundedWorker: a job that finishes in time is waited for; one that does not
// leaves the caller free at its deadline, refuses further jobs while it runs,
// and lets new ones in once it returns; a worker destroyed with a stuck job
// neither waits for it nor breaks when it later finishes. Its thread carries
// the name it is given, as `top -H` shows it.
#include "daemon/sampling/bounded_worker.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <string>

namespace iowatch::daemon {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

TEST(BoundedWorker, AJobThatFinishesInTimeIsWaitedFor) {
  BoundedWorker worker;
  auto result = std::make_shared<int>(0);
  ASSERT_TRUE(worker.Start([result] { *result = 42; }));
  EXPECT_TRUE(worker.WaitUntil(Clock::now() + 10s));
  EXPECT_EQ(*result, 42);
  ASSERT_TRUE(worker.Start([result] { *result = 7; }));  // free again
  EXPECT_TRUE(worker.WaitUntil(Clock::now() + 10s));
  EXPECT_EQ(*result, 7);
}

TEST(BoundedWorker, ItsThreadCarriesItsNameCutToTheKernels15Bytes) {
  BoundedWorker worker;
  auto name = std::make_shared<std::string>();
  const auto own_name = [name] {
    std::array<char, 64> text{};
    pthread_getname_np(pthread_self(), text.data(), text.size());
    *name = text.data();
  };
  worker.SetName("diskstats");
  ASSERT_TRUE(worker.Start(own_name));
  ASSERT_TRUE(worker.WaitUntil(Clock::now() + 10s));
  EXPECT_EQ(*name, "diskstats");
  worker.SetName("a-name-longer-than-fifteen-bytes");
  ASSERT_TRUE(worker.Start(own_name));
  ASSERT_TRUE(worker.WaitUntil(Clock::now() + 10s));
  EXPECT_EQ(*name, "a-name-longer-t");
}

TEST(BoundedWorker, AStuckJobCostsTheCallerOnlyTheDeadlineAndBlocksNewJobsUntilItReturns) {
  BoundedWorker worker;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  ASSERT_TRUE(worker.Start([released] { released.wait(); }));
  const auto start = Clock::now();
  EXPECT_FALSE(worker.WaitUntil(start + 50ms));
  EXPECT_LT(Clock::now() - start, 5s);  // a wide margin: the point is that it returns
  EXPECT_FALSE(worker.Start([] {}));    // refused while stuck, not queued
  EXPECT_FALSE(worker.WaitUntil(Clock::now()));
  release.set_value();
  EXPECT_TRUE(worker.WaitUntil(Clock::now() + 10s));
  auto ran = std::make_shared<std::atomic<bool>>(false);
  ASSERT_TRUE(worker.Start([ran] { *ran = true; }));
  EXPECT_TRUE(worker.WaitUntil(Clock::now() + 10s));
  EXPECT_TRUE(*ran);
}

TEST(BoundedWorker, DestroyedWhileStuckItDoesNotWaitAndTheJobEndsCleanlyLater) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto finished = std::make_shared<std::promise<void>>();
  std::future<void> done = finished->get_future();
  {
    BoundedWorker worker;
    ASSERT_TRUE(worker.Start([released, finished] {
      released.wait();
      finished->set_value();
    }));
    EXPECT_FALSE(worker.WaitUntil(Clock::now() + 10ms));
  }  // the destructor returns with the job still blocked
  release.set_value();
  EXPECT_EQ(done.wait_for(10s), std::future_status::ready);
}

}  // namespace
}  // namespace iowatch::daemon
