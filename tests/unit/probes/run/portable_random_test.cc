// PortableRandom and SplitMix64: fixed sequences, so that a seed means the
// same offsets, mix and data on every build.
#include "probes/stats/portable_random.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "probes/run/offset_generator.h"

namespace iowatch::probes {
namespace {

TEST(PortableRandomTest, MatchesReferenceXoshiro256StarStar) {
  // Values from an independent implementation (xoshiro256** with the state
  // filled by splitmix64): a change here changes every seeded run.
  PortableRandom zero(0);
  EXPECT_EQ(zero.Next(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(zero.Next(), 0xbf6e1f784956452aULL);
  EXPECT_EQ(zero.Next(), 0x1a5f849d4933e6e0ULL);
  PortableRandom fio_default(kDefaultRandSeed);
  EXPECT_EQ(fio_default.Next(), 0xbce820174d924d39ULL);
  PortableRandom bounded(42);
  const std::vector<uint64_t> expected = {83, 378, 680, 924, 991, 769, 719, 850};
  for (const uint64_t value : expected) EXPECT_EQ(bounded.Below(1000), value);
}

TEST(PortableRandomTest, BelowStaysInRange) {
  PortableRandom random(7);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(random.Below(1), 0u);
  const uint64_t huge = (UINT64_MAX / 3) * 2;  // rejection happens often here
  for (int i = 0; i < 10000; ++i) EXPECT_LT(random.Below(huge), huge);
}

TEST(PortableRandomTest, SplitMix64MatchesReference) {
  // The reference outputs of splitmix64 from state 0 (Vigna's splitmix64.c).
  uint64_t state = 0;
  EXPECT_EQ(SplitMix64(state), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(SplitMix64(state), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(SplitMix64(state), 0x06c45d188009454fULL);
}

TEST(PortableRandomTest, FillWritesSuccessiveDrawsAndCutsTheLastOne) {
  PortableRandom reference(99);
  std::array<uint64_t, 3> words{};
  for (uint64_t& word : words) word = reference.Next();
  const uint64_t after = reference.Next();

  PortableRandom random(99);
  std::vector<std::byte> bytes(2 * sizeof(uint64_t) + 3);
  random.Fill(bytes);
  EXPECT_EQ(std::memcmp(bytes.data(), words.data(), bytes.size()), 0);
  EXPECT_EQ(random.Next(), after) << "19 bytes take ceil(19 / 8) = 3 draws";

  PortableRandom untouched(99);
  untouched.Fill({});
  EXPECT_EQ(untouched.Next(), words[0]) << "an empty span draws nothing";
}

}  // namespace
}  // namespace iowatch::probes
