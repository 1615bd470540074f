// InFlightSlots: the runner's bookkeeping of the I/Os between Queue and their
// completion. There is one slot per unit of iodepth, and a slot's index is
// both the request's tag and its I/O buffer's index, so a completion finds
// its timestamps and buffer without a search and no two I/Os in flight share
// a buffer. A slot goes from free to the batch (queued, not yet submitted),
// to in flight with Submit, and back to free on completion. Free slots are
// reused last-freed first, so the order of buffers is deterministic.
// Thread-safety: none; it lives on the runner's thread.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "probes/engines/engine.h"

namespace iowatch::probes {

// One I/O from the moment it is prepared until it completes.
struct Slot {
  IoOp op = IoOp::kRead;
  uint32_t length = 0;
  uint64_t offset = 0;
  uint64_t start_ns = 0;
  uint64_t issue_ns = 0;
  bool measured = false;  // started after the ramp, so its latency counts
};

class InFlightSlots {
 public:
  // `depth` slots, all free.
  explicit InFlightSlots(uint32_t depth);

  bool HasFree() const { return !free_.empty(); }
  uint32_t InFlight() const { return in_flight_; }
  bool BatchEmpty() const { return batch_.empty(); }

  // Takes a free slot (HasFree() must hold) for `slot`; returns its index.
  uint32_t Take(const Slot& slot);
  // Frees a taken slot whose request the engine refused to queue.
  void Untake(uint32_t index);
  // The taken slot's request is queued: it starts with the next Submit.
  void AddToBatch(uint32_t index);
  // Submit started the first `started` requests of the batch: their slots are
  // in flight; the rest stay in the batch (the engine keeps them queued for
  // the next Submit). `issue_ns`, when given, becomes their issue time
  // (asynchronous engines).
  void BatchSubmitted(uint32_t started, std::optional<uint64_t> issue_ns);
  // Submit failed: the batch's slots are free again, as if nothing started.
  // Returns whether the batch held an fsync.
  bool BatchFailed();
  // Frees the slot of the completion tagged `tag` and returns what it held;
  // nullopt when no slot with that tag is in flight (an unknown tag, or a
  // second completion of one I/O: freeing the slot twice would hand its
  // buffer to two I/Os at once).
  std::optional<Slot> Complete(uint64_t tag);

 private:
  enum class State : uint8_t { kFree, kTaken, kInFlight };
  std::vector<Slot> slots_;
  std::vector<State> states_;
  std::vector<uint32_t> free_;
  std::vector<uint32_t> batch_;  // queued since the last Submit
  uint32_t in_flight_ = 0;
};

}  // namespace iowatch::probes
