// IoBuffers: the I/O buffers of one run, one per slot (iodepth × bs),
// carved from one allocation made once so the run never allocates, aligned
// for direct I/O. A job that writes fills them with PortableRandom data
// (compressing or deduplicating storage would otherwise report the speed of
// its compressor, not of the medium); the same seed gives the same contents.
// Thread-safety: none; one owner. The memory lives as long as the object,
// so an engine using the buffers must be closed before they go.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/leak_on_purpose.h"
#include "common/result.h"

namespace iowatch::probes {

class IoBuffers {
 public:
  // `count` buffers of `size` bytes, each starting at a multiple of
  // `alignment` (raised to a power of two of at least sizeof(void*)), not
  // yet written. An allocation failure is an error with its errno.
  static Result<IoBuffers> Allocate(size_t count, size_t size, size_t alignment);

  // One PortableRandom(seed) stream, buffer after buffer.
  void Fill(uint64_t seed);

  std::span<const std::span<std::byte>> Spans() const { return spans_; }
  // The bytes of all buffers.
  size_t Bytes() const {
    size_t bytes = 0;
    for (const auto& span : spans_) bytes += span.size();
    return bytes;
  }

  // Gives the memory up without freeing it: a hung device may still write
  // into it (ProbeEngine::AbandonedIos). Spans stay valid.
  void Leak() { LeakOnPurpose(block_.release()); }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept;
  };
  std::unique_ptr<std::byte, Free> block_;
  std::vector<std::span<std::byte>> spans_;
};

}  // namespace iowatch::probes
