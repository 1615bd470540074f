#include "daemon/sampling/relay_runner.h"

#include <algorithm>
#include <utility>

namespace iowatch::daemon {

// What outlives a Run: which jobs are still running (a stuck one may return
// samples later, or after the runner is gone).
struct RelayRunner::Shared {
  std::mutex mutex;
  std::condition_variable all_done;
  std::vector<bool> running;
};

// One Run's jobs, shared with the workers that take them.
struct RelayRunner::Round {
  std::vector<std::function<void()>> jobs;
  std::vector<size_t> order;  // the jobs to run, those not still running
  size_t next = 0;            // in order: the next to take
  size_t finished = 0;
  std::vector<bool> done;
  bool closed = false;  // the caller has gone: take nothing more
};

RelayRunner::RelayRunner(size_t jobs, std::string thread_name,
                         std::chrono::steady_clock::duration stall)
    : thread_name_(std::move(thread_name)), stall_(stall), shared_(std::make_shared<Shared>()) {
  shared_->running.assign(jobs, false);
}

RelayRunner::~RelayRunner() = default;

void RelayRunner::Drain(const std::shared_ptr<Shared>& shared,
                        const std::shared_ptr<Round>& round) {
  std::unique_lock lock(shared->mutex);
  while (!round->closed && round->next < round->order.size()) {
    const size_t job = round->order[round->next++];
    shared->running[job] = true;
    lock.unlock();
    round->jobs[job]();
    lock.lock();
    shared->running[job] = false;
    round->done[job] = true;
    if (++round->finished == round->order.size()) shared->all_done.notify_all();
  }
}

void RelayRunner::StartWorker(const std::shared_ptr<Round>& round) {
  auto job = [shared = shared_, round] { Drain(shared, round); };
  for (const auto& worker : workers_) {
    if (worker->Start(job)) return;  // an idle one; a busy one refuses
  }
  workers_.push_back(std::make_unique<BoundedWorker>());
  workers_.back()->SetName(thread_name_);
  workers_.back()->Start(std::move(job));
}

std::vector<bool> RelayRunner::Run(std::vector<std::function<void()>> jobs,
                                   std::chrono::steady_clock::time_point deadline) {
  auto round = std::make_shared<Round>();
  round->done.assign(jobs.size(), false);
  round->jobs = std::move(jobs);
  {
    std::lock_guard lock(shared_->mutex);
    for (size_t i = 0; i < round->jobs.size() && i < shared_->running.size(); ++i) {
      if (!shared_->running[i]) round->order.push_back(i);
    }
  }
  if (round->order.empty()) return round->done;
  StartWorker(round);
  std::unique_lock lock(shared_->mutex);
  size_t finished_at_last_look = 0;
  for (;;) {
    const auto look = std::min(deadline, std::chrono::steady_clock::now() + stall_);
    const bool all = shared_->all_done.wait_until(
        lock, look, [&] { return round->finished == round->order.size(); });
    if (all || std::chrono::steady_clock::now() >= deadline) break;
    const bool stalled = round->finished == finished_at_last_look;
    finished_at_last_look = round->finished;
    if (stalled && round->next < round->order.size()) {
      lock.unlock();
      StartWorker(round);
      lock.lock();
    }
  }
  round->closed = true;
  return round->done;
}

}  // namespace iowatch::daemon
