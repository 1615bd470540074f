// BoundedWorker: a thread that runs one job at a time for a caller who will
// not wait past a deadline. A read of procfs or sysfs can block for good (a
// sysfs attribute of a dying device, a FUSE or NFS mount under an injected
// root); run on the caller's thread it would stall the sampler and, with it,
// everything after. Here the caller starts the job, waits until its deadline
// and moves on; a job still running then keeps its thread, and the worker
// refuses new jobs until it returns, so a stuck source costs one thread,
// never one per sample. A job's results must live in memory the job owns
// (a shared_ptr it captured): the caller may be gone when it finishes.
// Thread-safety: Start and WaitUntil from one thread (the owner); the job
// runs on the worker's.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>

namespace iowatch::daemon {

class BoundedWorker {
 public:
  BoundedWorker();
  // Joins an idle worker; a stuck one is detached (its thread ends when the
  // read returns, or with the process).
  ~BoundedWorker();
  BoundedWorker(const BoundedWorker&) = delete;
  BoundedWorker& operator=(const BoundedWorker&) = delete;

  // Hands `job` to the worker; false, and the job dropped, while the previous
  // job is still running.
  bool Start(std::function<void()> job);
  // Waits for the job started last until `deadline`; true once it has finished.
  bool WaitUntil(std::chrono::steady_clock::time_point deadline);
  // Names the worker's thread (common/thread_name.h: what it reads, so that
  // `top -H` says which source costs what).
  void SetName(std::string_view name);

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable wake;  // a job or stop for the worker
    std::condition_variable done;  // the job finished, for the owner
    std::function<void()> job;
    bool busy = false;
    bool stop = false;
  };
  static void Loop(std::shared_ptr<State> state);

  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace iowatch::daemon
