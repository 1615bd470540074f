// RelayRunner: runs a fixed list of jobs (the sample's sources) in turn on
// one worker thread, for a caller who will not wait past a deadline. One
// thread woken per sample instead of one per source: with twenty sources
// that is twenty fewer wake-ups a second, most of an idle sample's cost.
// When the worker makes no progress for a stall period (a read blocked on a
// dying device or a hung FUSE mount), the jobs it has not started yet pass
// to a fresh worker, as a relay's baton: one stuck job never holds up the
// others. A job still running from an earlier call is not started again
// until it returns (the caller serves its previous result instead), so a
// stuck source costs one thread, never one per sample. Each job's results
// must live in memory it owns: the caller may be gone when it finishes.
// Thread-safety: Run from one thread (the owner); jobs run on the workers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/sampling/bounded_worker.h"

namespace iowatch::daemon {

class RelayRunner {
 public:
  // `jobs` is how many jobs each Run is given; the workers' threads are
  // called `thread_name` (common/thread_name.h).
  RelayRunner(size_t jobs, std::string thread_name, std::chrono::steady_clock::duration stall);
  ~RelayRunner();
  RelayRunner(const RelayRunner&) = delete;
  RelayRunner& operator=(const RelayRunner&) = delete;

  // Runs each job in order, skipping those still running from an earlier
  // Run, until all have finished or `deadline` passes; which of them finished.
  std::vector<bool> Run(std::vector<std::function<void()>> jobs,
                        std::chrono::steady_clock::time_point deadline);
  // Threads made so far: one while nothing has stalled.
  size_t Workers() const { return workers_.size(); }

 private:
  struct Shared;
  struct Round;
  // Runs the round's jobs not yet taken, until none is left or it closes.
  static void Drain(const std::shared_ptr<Shared>& shared, const std::shared_ptr<Round>& round);
  // Hands the round to an idle worker, or to a new one.
  void StartWorker(const std::shared_ptr<Round>& round);

  std::string thread_name_;
  std::chrono::steady_clock::duration stall_;
  std::shared_ptr<Shared> shared_;
  std::vector<std::unique_ptr<BoundedWorker>> workers_;
};

}  // namespace iowatch::daemon
