#include "daemon/passive/passive_store.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <system_error>
#include <utility>

#include "common/log.h"
#include "common/terminal_text.h"
#include "common/thread_name.h"
#include "probes/verdicts/passive/passive_drift.h"

namespace iowatch::daemon {
namespace {

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Every readable state with its learned windows and its drift reference's;
// unreadable ones moved aside.
Result<std::vector<PassiveRestored>> ReadStates(probes::Store& store, size_t max_learned) {
  std::vector<probes::UnreadablePassiveState> unreadable;
  Result<std::vector<probes::StoredPassiveState>> states = store.PassiveStates(unreadable);
  if (!states) return ErrorOf(states);
  for (const probes::UnreadablePassiveState& row : unreadable) {
    spdlog::error(
        "passive judge store {}: {}; moved to passive_states_quarantine, the series "
        "learns again",
        store.Path(), TerminalText(row.Describe()));
    if (Status moved = store.QuarantinePassiveState(row, NowUnixMs()); !moved) {
      spdlog::error("passive judge store: {}", moved.error().ToString());
    }
  }
  std::vector<PassiveRestored> out;
  for (probes::StoredPassiveState& s : *states) {
    Result<std::vector<probes::PassivePoint>> learned =
        store.PassiveLearned(s.device, s.op, s.size, s.source, max_learned);
    if (!learned) return ErrorOf(learned);
    Result<std::vector<probes::PassivePoint>> reference = store.PassiveLearned(
        s.device, s.op, s.size, s.source, probes::PassiveDrift::kMaxReferencePoints, true);
    if (!reference) return ErrorOf(reference);
    out.push_back({std::move(s), std::move(*learned), std::move(*reference)});
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<PassiveStore>> PassiveStore::Open(const std::filesystem::path& state_dir,
                                                         size_t max_learned,
                                                         std::vector<PassiveRestored>& restored,
                                                         std::chrono::milliseconds reset_poll) {
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  Result<probes::Store> store = probes::Store::OpenInStateDir(state_dir);
  if (!store) return ErrorOf(store);
  Result<std::vector<PassiveRestored>> states = ReadStates(*store, max_learned);
  if (!states) return ErrorOf(states);
  restored = std::move(*states);
  // Resets made before this start are in the states read (their rows gone).
  Result<std::vector<std::pair<std::string, int64_t>>> resets = store->PassiveResetsAfter(0);
  if (!resets) return ErrorOf(resets);
  const int64_t seen = resets->empty() ? 0 : resets->back().second;
  return std::unique_ptr<PassiveStore>(
      new PassiveStore(std::move(*store), max_learned, reset_poll, seen));
}

PassiveStore::PassiveStore(probes::Store store, size_t keep_learned,
                           std::chrono::milliseconds reset_poll, int64_t resets_seen_ms)
    : store_(std::move(store)),
      path_(store_->Path()),
      keep_learned_(keep_learned),
      reset_poll_(reset_poll),
      resets_seen_ms_(resets_seen_ms),
      thread_([this] {
        NameThisThread("passive-store");
        Loop();
      }) {}

PassiveStore::~PassiveStore() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void DropDevice(PassiveBatch& batch, const std::string& device) {
  std::erase_if(batch.windows, [&](const auto& w) { return w.window.device == device; });
  std::erase_if(batch.learned, [&](const auto& m) { return m.device == device; });
  std::erase_if(batch.states, [&](const auto& s) { return s.device == device; });
}

namespace {

// `later` appended to `into`: written after it, in the same transaction
// (whose deletions come first: what `into` held of a disk that `later`
// forgets goes now).
void Merge(PassiveBatch& into, PassiveBatch&& later) {
  for (const std::string& device : later.forget_devices) DropDevice(into, device);
  const auto append = [](auto& to, auto&& from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  append(into.forget_devices, std::move(later.forget_devices));
  append(into.windows, std::move(later.windows));
  append(into.learned, std::move(later.learned));
  append(into.states, std::move(later.states));
  if (later.prune_before_ms) into.prune_before_ms = later.prune_before_ms;
}

}  // namespace

void PassiveStore::Post(PassiveBatch batch) {
  {
    const std::lock_guard lock(mutex_);
    queued_windows_ += batch.windows.size();
    while (queued_windows_ > kMaxQueuedWindows && !queue_.empty()) {
      queued_windows_ -= queue_.front().windows.size();
      queue_.pop_front();
      ++errors_;
    }
    if (queue_.size() >= kMaxQueued) {
      PassiveBatch& back = queue_.back();
      const size_t before = back.windows.size() + batch.windows.size();
      Merge(back, std::move(batch));
      queued_windows_ -= before - back.windows.size();  // those of a forgotten disk
    } else {
      queue_.push_back(std::move(batch));
    }
  }
  wake_.notify_one();
}

uint64_t PassiveStore::Errors() const {
  const std::lock_guard lock(mutex_);
  return errors_;
}

std::vector<std::string> PassiveStore::TakeResets() {
  const std::lock_guard lock(mutex_);
  return std::exchange(resets_, {});
}

void PassiveStore::Loop() {
  std::unique_lock lock(mutex_);
  auto next_poll = std::chrono::steady_clock::now();
  while (true) {
    wake_.wait_until(lock, next_poll, [this] { return stop_ || !queue_.empty(); });
    if (std::chrono::steady_clock::now() >= next_poll) {
      lock.unlock();
      PollResets();
      lock.lock();
      next_poll = std::chrono::steady_clock::now() + reset_poll_;
    }
    if (queue_.empty()) {
      if (stop_) return;  // everything written
      continue;
    }
    PassiveBatch batch = std::move(queue_.front());
    queue_.pop_front();
    queued_windows_ -= batch.windows.size();
    lock.unlock();
    Write(std::move(batch));
    lock.lock();
  }
}

bool PassiveStore::EnsureStore() {
  if (store_ && !store_->CheckFile()) store_.reset();  // moved aside, removed or replaced
  if (store_) return true;
  Result<probes::Store> reopened = probes::Store::Open(path_);
  if (!reopened) {
    spdlog::error("passive judge store: {}", reopened.error().ToString());
    return false;
  }
  store_.emplace(std::move(*reopened));
  return true;
}

void PassiveStore::PollResets() {
  if (!EnsureStore()) return;
  Result<std::vector<std::pair<std::string, int64_t>>> resets =
      store_->PassiveResetsAfter(resets_seen_ms_);
  if (!resets) {
    spdlog::error("passive judge store: {}", resets.error().ToString());
    return;
  }
  if (resets->empty()) return;
  std::vector<std::string> devices;
  for (const auto& [device, at_ms] : *resets) {
    spdlog::info("passive judge: {} was reset (iowatch baseline passive-reset): it learns afresh",
                 TerminalText(device));
    resetting_.insert(device);
    devices.push_back(device);
    resets_seen_ms_ = std::max(resets_seen_ms_, at_ms);
  }
  const std::lock_guard lock(mutex_);
  resets_.insert(resets_.end(), devices.begin(), devices.end());
}

void PassiveStore::Write(PassiveBatch batch) {
  // What a batch built before the service forgot a reset disk still holds
  // of it is the old judge's: the reset deleted it, it stays deleted.
  for (const std::string& device : batch.forget_devices) resetting_.erase(device);
  for (const std::string& device : resetting_) DropDevice(batch, device);
  if (!EnsureStore()) {
    const std::lock_guard lock(mutex_);
    ++errors_;
    return;
  }
  Status done;
  for (const std::string& device : batch.forget_devices) {
    if (done) done = store_->DeletePassiveDevice(device);
  }
  if (done) done = store_->PutPassive(batch.windows, batch.learned, batch.states);
  if (done && batch.prune_before_ms) {
    const Result<int64_t> pruned =
        store_->PrunePassiveWindows(*batch.prune_before_ms, keep_learned_);
    if (!pruned) done = std::unexpected(pruned.error());
  }
  if (done) return;
  spdlog::error("passive judge store: {}", done.error().ToString());
  const std::lock_guard lock(mutex_);
  ++errors_;
}

}  // namespace iowatch::daemon
