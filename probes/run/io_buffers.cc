#include "probes/run/io_buffers.h"

#include <algorithm>
#include <bit>
#include <cstdlib>

#include "probes/stats/portable_random.h"

namespace iowatch::probes {

void IoBuffers::Free::operator()(std::byte* p) const noexcept { std::free(p); }

Result<IoBuffers> IoBuffers::Allocate(size_t count, size_t size, size_t alignment, uint64_t seed) {
  alignment = std::bit_ceil(std::max<size_t>(alignment, sizeof(void*)));
  IoBuffers buffers;
  buffers.owned_.reserve(count);
  buffers.spans_.reserve(count);
  PortableRandom random(seed);
  for (size_t i = 0; i < count; ++i) {
    void* memory = nullptr;
    if (const int err = posix_memalign(&memory, alignment, size); err != 0) {
      return ErrnoError(err, fmt::format("allocating {} I/O buffers of {} bytes", count, size), "");
    }
    buffers.owned_.emplace_back(static_cast<std::byte*>(memory));
    std::span<std::byte> span(static_cast<std::byte*>(memory), size);
    random.Fill(span);
    buffers.spans_.push_back(span);
  }
  return buffers;
}

}  // namespace iowatch::probes
