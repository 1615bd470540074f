#include "probes/stats/portable_random.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace iowatch::probes {

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

PortableRandom::PortableRandom(uint64_t seed) {
  for (uint64_t& word : state_) word = SplitMix64(seed);
}

uint64_t PortableRandom::Next() {
  const uint64_t result = std::rotl(state_[1] * 5, 7) * 9;
  const uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = std::rotl(state_[3], 45);
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

void PortableRandom::Fill(std::span<std::byte> out) {
  for (size_t at = 0; at < out.size(); at += sizeof(uint64_t)) {
    const uint64_t word = Next();
    std::memcpy(out.data() + at, &word, std::min(sizeof(word), out.size() - at));
  }
}

}  // namespace iowatch::probes
