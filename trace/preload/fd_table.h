// The trace library's descriptor table: per descriptor number a Slot with
// the open file's FileTrace and Cursor, in chunks of 1024 slots mapped when a
// descriptor of their range is first traced. Looking a descriptor up is two
// loads and no lock, so that reads of sockets and pipes, which are not
// traced, cost almost nothing; a traced slot's updates take its own spin
// lock (uncontended: one atomic exchange).
// A slot's identity (traced or not, its file entry, a generation bumped each
// time it is traced or retired) is one atomic word, read whole by the
// lookup: a call that looked a slot up, then went into the kernel while
// another thread closed the descriptor and opened another file on its
// number, finds on its return that the generation moved on, and is counted
// as the file it was made on, not as the new one.
// Thread-safety: FindTraced from any thread; Map, and changes of a slot's
// state under the tracer's mutex and the slot's lock.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "trace/file_trace.h"

namespace iowatch::trace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Bit 0: traced; bits 1-31: the file entry; bits 32-63: the generation.
struct SlotState {
  uint64_t word = 0;

  bool traced() const { return (word & 1) != 0; }
  uint32_t file() const { return static_cast<uint32_t>(word >> 1) & 0x7fffffffu; }
  uint32_t generation() const { return static_cast<uint32_t>(word >> 32); }
  // The next state: the generation one on, `file`, traced or not.
  SlotState Next(uint32_t next_file, bool next_traced) const {
    return {(uint64_t{generation() + 1u} << 32) | (uint64_t{next_file & 0x7fffffffu} << 1) |
            (next_traced ? 1u : 0u)};
  }
  bool operator==(const SlotState&) const = default;
};

// Which file a descriptor is (fstat's device and inode): what a number
// was traced as is checked against what it is now before a race between
// the program's threads can pass one file's traffic to another.
struct FileId {
  uint64_t device = 0;
  uint64_t inode = 0;
  bool operator==(const FileId&) const = default;
};

struct Slot {
  std::atomic<uint64_t> state{0};
  std::atomic<bool> locked{false};
  FileId id;  // set with the state, under the tracer's mutex
  Cursor cursor;
  FileTrace trace;

  SlotState State() const { return {state.load(std::memory_order_acquire)}; }
  void SetState(SlotState next) { state.store(next.word, std::memory_order_release); }
  void Lock() {
    while (locked.exchange(true, std::memory_order_acquire)) {
      while (locked.load(std::memory_order_relaxed)) CpuRelax();
    }
  }
  void Unlock() { locked.store(false, std::memory_order_release); }
};

// A traced slot as a lookup found it: the state it had then.
struct TracedSlot {
  Slot* slot = nullptr;
  SlotState seen;
  explicit operator bool() const { return slot != nullptr; }
};

class FdTable {
 public:
  static constexpr size_t kChunkSlots = 1024;
  static constexpr size_t kChunks = 1024;  // descriptors up to 2^20

  // The descriptor's slot and its state if traced, else an empty TracedSlot.
  TracedSlot FindTraced(int fd) const {
    if (fd < 0 || static_cast<size_t>(fd) >= kChunkSlots * kChunks) return {};
    Slot* chunk = chunks_[static_cast<size_t>(fd) / kChunkSlots].load(std::memory_order_acquire);
    if (chunk == nullptr) return {};
    Slot* slot = &chunk[static_cast<size_t>(fd) % kChunkSlots];
    const SlotState state = slot->State();
    return state.traced() ? TracedSlot{slot, state} : TracedSlot{};
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

}  // namespace iowatch::trace
