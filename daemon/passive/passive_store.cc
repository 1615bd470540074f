#include "daemon/passive/passive_store.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <iterator>
#include <system_error>
#include <utility>

#include "common/terminal_text.h"

namespace iowatch::daemon {
namespace {

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Every readable state with its learned windows; unreadable ones moved aside.
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
    out.push_back({std::move(s), std::move(*learned)});
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<PassiveStore>> PassiveStore::Open(const std::filesystem::path& state_dir,
                                                         size_t max_learned,
                                                         std::vector<PassiveRestored>& restored) {
  std::error_code ec;
  std::filesystem::create_directories(state_dir, ec);
  Result<probes::Store> store = probes::Store::OpenInStateDir(state_dir);
  if (!store) return ErrorOf(store);
  Result<std::vector<PassiveRestored>> states = ReadStates(*store, max_learned);
  if (!states) return ErrorOf(states);
  restored = std::move(*states);
  return std::unique_ptr<PassiveStore>(new PassiveStore(std::move(*store), max_learned));
}

PassiveStore::PassiveStore(probes::Store store, size_t keep_learned)
    : store_(std::move(store)),
      path_(store_->Path()),
      keep_learned_(keep_learned),
      thread_([this] { Loop(); }) {}

PassiveStore::~PassiveStore() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

namespace {

// `later` appended to `into`: written after it, in the same transaction
// (whose deletions come first: what `into` held of a disk that `later`
// forgets goes now).
void Merge(PassiveBatch& into, PassiveBatch&& later) {
  for (const std::string& device : later.forget_devices) {
    std::erase_if(into.windows, [&](const auto& w) { return w.window.device == device; });
    std::erase_if(into.learned, [&](const auto& m) { return m.device == device; });
    std::erase_if(into.states, [&](const auto& s) { return s.device == device; });
  }
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

void PassiveStore::Loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopped, everything written
    PassiveBatch batch = std::move(queue_.front());
    queue_.pop_front();
    queued_windows_ -= batch.windows.size();
    lock.unlock();
    Write(batch);
    lock.lock();
  }
}

void PassiveStore::Write(const PassiveBatch& batch) {
  if (store_ && !store_->CheckFile()) store_.reset();  // moved aside, removed or replaced
  if (!store_) {
    Result<probes::Store> reopened = probes::Store::Open(path_);
    if (!reopened) {
      spdlog::error("passive judge store: {}", reopened.error().ToString());
      const std::lock_guard lock(mutex_);
      ++errors_;
      return;
    }
    store_.emplace(std::move(*reopened));
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
