#include "probes/run/io_buffers.h"

#include <algorithm>
#include <bit>
#include <cstdlib>

#include "probes/stats/portable_random.h"

namespace iowatch::probes {

void IoBuffers::Free::operator()(std::byte* p) const noexcept { std::free(p); }

// One block, carved into `count` buffers at `stride` bytes, as fio lays out
// its io_u buffers, and left untouched until the engine has registered it:
// how the block layer splits a large request depends on how the pages under
// a buffer were faulted in, and buffers written before io_uring pinned them
// read 1 MiB requests 15-20 % slower than fio's (fixedbufs, this VM's disk).
Result<IoBuffers> IoBuffers::Allocate(size_t count, size_t size, size_t alignment) {
  alignment = std::bit_ceil(std::max<size_t>(alignment, sizeof(void*)));
  const size_t stride = (size + alignment - 1) / alignment * alignment;
  IoBuffers buffers;
  void* memory = nullptr;
  if (const int err = posix_memalign(&memory, alignment, std::max<size_t>(stride * count, 1));
      err != 0) {
    return ErrnoError(err, fmt::format("allocating {} I/O buffers of {} bytes", count, size), "");
  }
  buffers.block_.reset(static_cast<std::byte*>(memory));
  buffers.spans_.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    buffers.spans_.emplace_back(buffers.block_.get() + i * stride, size);
  }
  return buffers;
}

void IoBuffers::Fill(uint64_t seed) {
  PortableRandom random(seed);
  for (const std::span<std::byte> span : spans_) random.Fill(span);
}

}  // namespace iowatch::probes
