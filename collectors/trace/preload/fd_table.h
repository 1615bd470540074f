// The trace library's descriptor table: per descriptor number a Slot with
// the open file's FileTrace and Cursor, in chunks of 1024 slots mapped when a
// descriptor of their range is first traced. Looking a descriptor up is two
// loads and no lock, so that reads of sockets and pipes, which are not
// traced, cost almost nothing; a traced slot's updates take its own spin
// lock (uncontended: one atomic exchange).
// Thread-safety: Find from any thread; Map under the tracer's mutex.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "collectors/trace/file_trace.h"

namespace iowatch::collectors::trace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

struct Slot {
  std::atomic<bool> traced{false};
  std::atomic<bool> locked{false};
  uint32_t path_id = 0;  // the tracer's file table entry
  Cursor cursor;
  FileTrace trace;

  void Lock() {
    while (locked.exchange(true, std::memory_order_acquire)) {
      while (locked.load(std::memory_order_relaxed)) CpuRelax();
    }
  }
  void Unlock() { locked.store(false, std::memory_order_release); }
};

class FdTable {
 public:
  static constexpr size_t kChunkSlots = 1024;
  static constexpr size_t kChunks = 1024;  // descriptors up to 2^20

  // The descriptor's slot if traced, else nullptr.
  Slot* FindTraced(int fd) const {
    if (fd < 0 || static_cast<size_t>(fd) >= kChunkSlots * kChunks) return nullptr;
    Slot* chunk = chunks_[static_cast<size_t>(fd) / kChunkSlots].load(std::memory_order_acquire);
    if (chunk == nullptr) return nullptr;
    Slot* slot = &chunk[static_cast<size_t>(fd) % kChunkSlots];
    return slot->traced.load(std::memory_order_acquire) ? slot : nullptr;
  }

  // The descriptor's slot, mapping its chunk if needed; nullptr when the
  // number is beyond the table or the memory cannot be had.
  Slot* Map(int fd);

  // Every slot of every mapped chunk.
  template <class Visit>
  void ForEachSlot(Visit&& visit) {
    for (std::atomic<Slot*>& chunk_pointer : chunks_) {
      Slot* chunk = chunk_pointer.load(std::memory_order_acquire);
      if (chunk == nullptr) continue;
      const auto first = static_cast<size_t>(&chunk_pointer - chunks_.data()) * kChunkSlots;
      for (size_t i = 0; i < kChunkSlots; ++i) visit(static_cast<int>(first + i), chunk[i]);
    }
  }

 private:
  std::array<std::atomic<Slot*>, kChunks> chunks_{};
};

}  // namespace iowatch::collectors::trace
