// IoBuffers: one aligned buffer per slot, filled from a seed.
#include "probes/run/io_buffers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "probes/stats/portable_random.h"

namespace iowatch::probes {
namespace {

TEST(IoBuffersTest, AlignedAndFilledFromTheSeedBufferAfterBuffer) {
  auto buffers = IoBuffers::Allocate(3, 5000, 4096);
  ASSERT_TRUE(buffers) << buffers.error().ToString();
  buffers->Fill(7);
  ASSERT_EQ(buffers->Spans().size(), 3u);
  PortableRandom random(7);
  for (const auto& span : buffers->Spans()) {
    EXPECT_EQ(span.size(), 5000u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(span.data()) % 4096, 0u);
    std::vector<std::byte> expected(span.size());
    random.Fill(expected);
    EXPECT_TRUE(std::equal(span.begin(), span.end(), expected.begin()));
  }
}

TEST(IoBuffersTest, OneBlockBufferAfterBuffer) {
  auto buffers = IoBuffers::Allocate(4, 5000, 4096);
  ASSERT_TRUE(buffers) << buffers.error().ToString();
  const auto spans = buffers->Spans();
  for (size_t i = 1; i < spans.size(); ++i) {
    EXPECT_EQ(spans[i].data() - spans[i - 1].data(), 8192);  // 5000 rounded up to the alignment
  }
}

TEST(IoBuffersTest, AlignmentIsRaisedToAPowerOfTwo) {
  auto buffers = IoBuffers::Allocate(2, 512, 3000);
  ASSERT_TRUE(buffers) << buffers.error().ToString();
  for (const auto& span : buffers->Spans()) {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(span.data()) % 4096, 0u);
  }
}

}  // namespace
}  // namespace iowatch::probes
