#include "daemon/sampling/bounded_worker.h"

#include <utility>

#include "common/thread_name.h"

namespace iowatch::daemon {

BoundedWorker::BoundedWorker()
    : state_(std::make_shared<State>()), thread_(&BoundedWorker::Loop, state_) {}

BoundedWorker::~BoundedWorker() {
  bool stuck = false;
  {
    std::lock_guard lock(state_->mutex);
    state_->stop = true;
    stuck = state_->busy;
  }
  state_->wake.notify_one();
  if (stuck) {
    thread_.detach();  // it holds its own reference to the state
  } else {
    thread_.join();
  }
}

void BoundedWorker::Loop(std::shared_ptr<State> state) {
  std::unique_lock lock(state->mutex);
  for (;;) {
    state->wake.wait(lock, [&] { return state->stop || state->job; });
    if (!state->job) return;  // stopped while idle
    std::function<void()> job = std::exchange(state->job, nullptr);
    lock.unlock();
    job();
    lock.lock();
    state->busy = false;
    state->done.notify_all();
    if (state->stop) return;
  }
}

bool BoundedWorker::Start(std::function<void()> job) {
  {
    std::lock_guard lock(state_->mutex);
    if (state_->busy) return false;
    state_->busy = true;
    state_->job = std::move(job);
  }
  state_->wake.notify_one();
  return true;
}

bool BoundedWorker::WaitUntil(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(state_->mutex);
  return state_->done.wait_until(lock, deadline, [&] { return !state_->busy; });
}

void BoundedWorker::SetName(std::string_view name) { NameThread(thread_.native_handle(), name); }

}  // namespace iowatch::daemon
