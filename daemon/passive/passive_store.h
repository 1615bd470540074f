// PassiveStore: the passive judge's side of the store (probes/store, the
// passive_states and passive_windows tables): what a start restores, and a
// writer thread that stores the windows and states the sampling thread
// hands over, so that a slow or full disk never holds a sample back.
//
// Batches are written in order, each in one transaction (a kill leaves a
// batch whole or absent). A writer that falls behind (a slow disk) has the
// newest batches merged into the last one queued; one that cannot keep up
// at all (a disk hung for hours) drops the oldest batch rather than grow
// past kMaxQueuedWindows: states are whole in every batch, so only that
// batch's windows are lost, and counted. A store
// that another process moved aside (the probe recorder's quarantine) is
// opened again at its path before the next batch.
//
// Resets: `iowatch baseline passive-reset DEV` deletes a disk's rows and
// notes the reset in the store; the writer looks for new ones every
// `reset_poll` and hands them to the service (TakeResets), and until the
// service's batch that forgets the disk arrives, it drops whatever the
// batches still hold of it (the old judge's windows and states).
// Thread-safety: Post and Errors from any thread; Open's results are the
// caller's.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "probes/store/store.h"

namespace iowatch::daemon {

// A series as the store kept it: its state, and the windows it learned
// from, oldest first.
struct PassiveRestored {
  probes::StoredPassiveState state;
  std::vector<probes::PassivePoint> learned;
  std::vector<probes::PassivePoint> reference;  // its drift reference's; none before chosen
};

struct PassiveBatch {
  std::vector<std::string> forget_devices;  // other disks took these names: state and windows go
  std::vector<probes::StoredPassiveWindow> windows;
  std::vector<probes::PassiveLearnedMark> learned;
  std::vector<probes::StoredPassiveState> states;
  // Windows that ended before this are pruned (the newest learned kept).
  std::optional<int64_t> prune_before_ms;
};

// Leaves out of `batch` what it holds of `device` (its windows, learned
// marks and states).
void DropDevice(PassiveBatch& batch, const std::string& device);

class PassiveStore {
 public:
  static constexpr size_t kMaxQueued = 16;
  static constexpr size_t kMaxQueuedWindows = 200'000;  // ~40 MB

  // Opens <state_dir>/iowatch.db (creating it) and reads every series'
  // state with its newest `max_learned` learned windows. A state that
  // cannot be read is moved to the quarantine and logged.
  static Result<std::unique_ptr<PassiveStore>> Open(
      const std::filesystem::path& state_dir, size_t max_learned,
      std::vector<PassiveRestored>& restored,
      std::chrono::milliseconds reset_poll = std::chrono::seconds(60));
  // Writes what is queued, then stops.
  ~PassiveStore();
  PassiveStore(const PassiveStore&) = delete;
  PassiveStore& operator=(const PassiveStore&) = delete;

  // Never blocks on the store.
  void Post(PassiveBatch batch);
  // Batches that failed or were dropped since start.
  uint64_t Errors() const;
  // The disks reset since the last call (kernel names).
  std::vector<std::string> TakeResets();

 private:
  PassiveStore(probes::Store store, size_t keep_learned, std::chrono::milliseconds reset_poll,
               int64_t resets_seen_ms);
  void Loop();
  // Reopens the store if it was moved aside; false when it cannot be.
  bool EnsureStore();
  void PollResets();
  void Write(PassiveBatch batch);

  std::optional<probes::Store> store_;  // the writer thread's alone once it runs
  std::filesystem::path path_;
  size_t keep_learned_;
  std::chrono::milliseconds reset_poll_;
  int64_t resets_seen_ms_;           // the writer's: the newest reset handed over
  std::set<std::string> resetting_;  // the writer's: reset, the service's forget not yet here
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<PassiveBatch> queue_;
  size_t queued_windows_ = 0;
  bool stop_ = false;
  uint64_t errors_ = 0;
  std::vector<std::string> resets_;  // for TakeResets
  std::thread thread_;
};

}  // namespace iowatch::daemon
