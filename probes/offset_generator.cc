#include "probes/offset_generator.h"

#include <random>

namespace iowatch::probes {
namespace {

// splitmix64 (Steele, Lea, Flood): spreads any seed, including 0 and small
// consecutive integers, over the whole state space.
uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t RotateLeft(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// A seed per stream: mixing the stream number in before splitmix64 makes the
// streams unrelated even for adjacent base seeds.
uint64_t DeriveSeed(uint64_t base, uint64_t stream) {
  uint64_t state = base ^ (stream * 0xd1b54a32d192ed03ULL);
  return SplitMix64(state);
}

}  // namespace

PortableRandom::PortableRandom(uint64_t seed) {
  for (uint64_t& word : state_) word = SplitMix64(seed);
}

uint64_t PortableRandom::Next() {
  const uint64_t result = RotateLeft(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = RotateLeft(state_[3], 45);
  return result;
}

uint64_t PortableRandom::Below(uint64_t bound) {
  __extension__ using Wide = unsigned __int128;
  Wide product = static_cast<Wide>(Next()) * bound;
  auto low = static_cast<uint64_t>(product);
  if (low < bound) {
    // Rejecting the low values that would be over-represented keeps every
    // result exactly equally likely; it is rare unless bound is near 2^64.
    const uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      product = static_cast<Wide>(Next()) * bound;
      low = static_cast<uint64_t>(product);
    }
  }
  return static_cast<uint64_t>(product >> 64);
}

JobSeeds SeedsFromBase(uint64_t base) {
  return JobSeeds{
      .base = base,
      .read_offsets = DeriveSeed(base, 1),
      .write_offsets = DeriveSeed(base, 2),
      .rw_mix = DeriveSeed(base, 3),
      .buffer_fill = DeriveSeed(base, 4),
  };
}

JobSeeds SeedsFor(const JobSpec& spec) {
  if (spec.randseed) return SeedsFromBase(*spec.randseed);
  if (spec.randrepeat) return SeedsFromBase(kDefaultRandSeed);
  std::random_device entropy;
  const uint64_t base = (static_cast<uint64_t>(entropy()) << 32) ^ entropy();
  return SeedsFromBase(base);
}

OffsetGenerator::OffsetGenerator(uint64_t region_offset, uint64_t region_size, uint64_t block_size,
                                 bool random, uint64_t seed)
    : region_offset_(region_offset),
      block_size_(block_size),
      blocks_(block_size == 0 ? 0 : region_size / block_size),
      random_(random),
      random_source_(seed) {
  // A region without a whole block cannot be addressed; callers validate
  // first, and this keeps Next() well-defined (always block 0) regardless.
  if (blocks_ == 0) blocks_ = 1;
}

}  // namespace iowatch::probes
