#include "probes/run/in_flight_slots.h"

#include <algorithm>
#include <cstddef>

namespace iowatch::probes {

InFlightSlots::InFlightSlots(uint32_t depth) : slots_(depth), states_(depth, State::kFree) {
  free_.reserve(depth);
  for (uint32_t i = depth; i-- > 0;) free_.push_back(i);
  batch_.reserve(depth);
}

uint32_t InFlightSlots::Take(const Slot& slot) {
  const uint32_t index = free_.back();
  free_.pop_back();
  slots_[index] = slot;
  states_[index] = State::kTaken;
  return index;
}

void InFlightSlots::Untake(uint32_t index) {
  states_[index] = State::kFree;
  free_.push_back(index);
}

void InFlightSlots::AddToBatch(uint32_t index) { batch_.push_back(index); }

void InFlightSlots::BatchSubmitted(uint32_t started, std::optional<uint64_t> issue_ns) {
  const auto n = std::min<size_t>(started, batch_.size());
  in_flight_ += static_cast<uint32_t>(n);
  for (size_t i = 0; i < n; ++i) {
    states_[batch_[i]] = State::kInFlight;
    if (issue_ns) slots_[batch_[i]].issue_ns = *issue_ns;
  }
  batch_.erase(batch_.begin(), batch_.begin() + static_cast<std::ptrdiff_t>(n));
}

bool InFlightSlots::BatchFailed() {
  bool held_fsync = false;
  for (const uint32_t index : batch_) {
    if (slots_[index].op == IoOp::kFsync) held_fsync = true;
    states_[index] = State::kFree;
    free_.push_back(index);
  }
  batch_.clear();
  return held_fsync;
}

std::optional<Slot> InFlightSlots::Complete(uint64_t tag) {
  if (tag >= slots_.size() || states_[tag] != State::kInFlight) return std::nullopt;
  const auto index = static_cast<uint32_t>(tag);
  states_[index] = State::kFree;
  free_.push_back(index);
  --in_flight_;
  return slots_[index];
}

}  // namespace iowatch::probes
