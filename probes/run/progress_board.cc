#include "probes/run/progress_board.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <new>
#include <string>
#include <utility>

namespace iowatch::probes {

Result<ProgressBoard> ProgressBoard::Create(size_t clones) {
  const size_t bytes = std::max<size_t>(clones, 1) * sizeof(Slot);
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    return ErrnoError(errno, "cannot map the clones' progress board", "");
  }
  auto* slots = static_cast<Slot*>(memory);
  for (size_t i = 0; i < clones; ++i) std::construct_at(slots + i);
  return ProgressBoard(slots, clones);
}

ProgressBoard::ProgressBoard(ProgressBoard&& other) noexcept
    : slots_(std::exchange(other.slots_, nullptr)), count_(std::exchange(other.count_, 0)) {}

ProgressBoard::~ProgressBoard() {
  if (slots_ == nullptr) return;
  std::destroy_n(slots_, count_);
  munmap(slots_, std::max<size_t>(count_, 1) * sizeof(Slot));
}

void ProgressBoard::Post(size_t clone, const RunProgress& p) {
  Slot& s = slots_[clone];
  s.fraction_done.store(p.fraction_done, std::memory_order_relaxed);
  s.read_iops.store(p.read_iops, std::memory_order_relaxed);
  s.write_iops.store(p.write_iops, std::memory_order_relaxed);
  s.read_bytes_per_second.store(p.read_bytes_per_second, std::memory_order_relaxed);
  s.write_bytes_per_second.store(p.write_bytes_per_second, std::memory_order_relaxed);
  s.eta_ns.store(p.eta.count(), std::memory_order_relaxed);
  s.ramping.store(p.ramping, std::memory_order_relaxed);
}

void ProgressBoard::MarkMeasuring(size_t clone) { slots_[clone].measuring.store(true); }
void ProgressBoard::MarkDone(size_t clone) { slots_[clone].done.store(true); }

bool ProgressBoard::AnyMeasuring() const {
  return std::ranges::any_of(Slots(), [](const Slot& s) { return s.measuring.load(); });
}

bool ProgressBoard::Done(size_t clone) const { return slots_[clone].done.load(); }

RunProgress ProgressBoard::Total() const {
  RunProgress total;
  size_t running = 0;
  for (const Slot& s : Slots()) {
    if (s.done.load()) continue;
    ++running;
    total.fraction_done += s.fraction_done.load(std::memory_order_relaxed);
    total.read_iops += s.read_iops.load(std::memory_order_relaxed);
    total.write_iops += s.write_iops.load(std::memory_order_relaxed);
    total.read_bytes_per_second += s.read_bytes_per_second.load(std::memory_order_relaxed);
    total.write_bytes_per_second += s.write_bytes_per_second.load(std::memory_order_relaxed);
    total.eta = std::max(total.eta, std::chrono::nanoseconds(s.eta_ns.load()));
    total.ramping = total.ramping || s.ramping.load(std::memory_order_relaxed);
  }
  if (running > 0) total.fraction_done /= static_cast<double>(running);
  return total;
}

}  // namespace iowatch::probes
