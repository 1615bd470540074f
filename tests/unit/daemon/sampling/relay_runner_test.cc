// RelayRunner: the jobs run in order on one thread while none stalls; a
// stuck job passes the rest to a second worker, so they still finish before
// the deadline; while it stays stuck it is not started again, and once it
// returns it runs with the next call; a runner destroyed with a stuck job
// neither waits for it nor lets the stuck worker start anything after.
#include "daemon/sampling/relay_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace iowatch::daemon {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// The thread each job ran on, and the order they ran in.
struct Trace {
  std::mutex mutex;
  std::vector<size_t> order;
  std::vector<std::thread::id> threads;
};

std::vector<std::function<void()>> TracedJobs(const std::shared_ptr<Trace>& trace, size_t count) {
  std::vector<std::function<void()>> jobs;
  for (size_t i = 0; i < count; ++i) {
    jobs.emplace_back([trace, i] {
      std::lock_guard lock(trace->mutex);
      trace->order.push_back(i);
      trace->threads.push_back(std::this_thread::get_id());
    });
  }
  return jobs;
}

TEST(RelayRunner, WithoutAStallEveryJobRunsInOrderOnOneThread) {
  RelayRunner runner(5, "sources", 1s);
  for (int call = 0; call < 3; ++call) {
    auto trace = std::make_shared<Trace>();
    const std::vector<bool> done = runner.Run(TracedJobs(trace, 5), Clock::now() + 10s);
    EXPECT_EQ(done, std::vector<bool>(5, true));
    EXPECT_EQ(trace->order, (std::vector<size_t>{0, 1, 2, 3, 4}));
    ASSERT_EQ(trace->threads.size(), 5u);
    for (const auto& id : trace->threads) EXPECT_EQ(id, trace->threads[0]);
    EXPECT_NE(trace->threads[0], std::this_thread::get_id());
  }
  EXPECT_EQ(runner.Workers(), 1u);
}

TEST(RelayRunner, AStuckJobHandsTheRestToAnotherWorkerAndIsNotStartedAgainWhileStuck) {
  RelayRunner runner(3, "sources", 20ms);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto stuck_runs = std::make_shared<std::atomic<int>>(0);
  auto trace = std::make_shared<Trace>();
  auto jobs = TracedJobs(trace, 3);
  jobs[1] = [released, stuck_runs] {
    ++*stuck_runs;
    released.wait();
  };
  const auto start = Clock::now();
  const std::vector<bool> done = runner.Run(jobs, start + 500ms);
  EXPECT_EQ(done, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(trace->order, (std::vector<size_t>{0, 2}));
  EXPECT_NE(trace->threads[0], trace->threads[1]);  // the third ran on the relay
  EXPECT_EQ(runner.Workers(), 2u);
  EXPECT_LT(Clock::now() - start, 5s);  // a wide margin: the point is that it returns

  // Still stuck: the next call neither waits for it nor starts it again.
  auto again = std::make_shared<Trace>();
  auto next_jobs = TracedJobs(again, 3);
  next_jobs[1] = [stuck_runs] { ++*stuck_runs; };
  EXPECT_EQ(runner.Run(next_jobs, Clock::now() + 10s), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(again->order, (std::vector<size_t>{0, 2}));
  EXPECT_EQ(*stuck_runs, 1);

  // Released, it runs with the call after.
  release.set_value();
  for (const auto limit = Clock::now() + 10s; Clock::now() < limit;) {
    if (runner.Run(next_jobs, Clock::now() + 10s)[1]) break;
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(*stuck_runs, 2);
}

TEST(RelayRunner, DestroyedWhileStuckItDoesNotWaitAndStartsNothingAfter) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto finished = std::make_shared<std::promise<void>>();
  std::future<void> stuck_done = finished->get_future();
  auto late = std::make_shared<std::atomic<bool>>(false);
  {
    // A stall longer than the deadline: no relay, the last job never starts.
    RelayRunner runner(2, "sources", 10s);
    std::vector<std::function<void()>> jobs{[released, finished] {
                                              released.wait();
                                              finished->set_value();
                                            },
                                            [late] { *late = true; }};
    EXPECT_EQ(runner.Run(jobs, Clock::now() + 20ms), (std::vector<bool>{false, false}));
  }  // the destructor returns with the job still blocked
  release.set_value();
  EXPECT_EQ(stuck_done.wait_for(10s), std::future_status::ready);
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(*late);
}

}  // namespace
}  // namespace iowatch::daemon
