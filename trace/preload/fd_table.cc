#include "trace/preload/fd_table.h"

#include <sys/mman.h>

#include <new>

namespace iowatch::trace {

Slot* FdTable::Map(int fd) {
  if (fd < 0 || static_cast<size_t>(fd) >= kChunkSlots * kChunks) return nullptr;
  std::atomic<Slot*>& pointer = chunks_[static_cast<size_t>(fd) / kChunkSlots];
  Slot* chunk = pointer.load(std::memory_order_acquire);
  if (chunk == nullptr) {
    // mmap, not malloc: the table must not depend on the traced program's
    // allocator, and a chunk lives until the process ends.
    void* memory = mmap(nullptr, sizeof(Slot) * kChunkSlots, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return nullptr;
    chunk = new (memory) Slot[kChunkSlots];
    pointer.store(chunk, std::memory_order_release);
  }
  return &chunk[static_cast<size_t>(fd) % kChunkSlots];
}

}  // namespace iowatch::trace
