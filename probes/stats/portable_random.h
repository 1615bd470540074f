// PortableRandom: the one pseudo-random generator of the probe engine, for
// offsets, the read/write mix and the data written (I/O buffers, probe-file
// fill). It is a fixed algorithm (xoshiro256** seeded through splitmix64,
// bounded draws by Lemire's method) rather than <random>'s distributions,
// whose output differs between standard libraries: a seed means the same
// sequence on every build, which is what randrepeat and randseed promise. Its
// output does not compress, which is all the data fill needs; it has no
// cryptographic strength.
// Thread-safety: none; each generator has one owner. SplitMix64 is pure.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace iowatch::probes {

// splitmix64 (Steele, Lea, Flood): advances `state` and returns the next
// output. Spreads any seed, including 0 and small consecutive integers, over
// the whole 64-bit range.
uint64_t SplitMix64(uint64_t& state);

// xoshiro256** (Blackman and Vigna), 2^256 − 1 period, state seeded by
// splitmix64 so that any 64-bit seed (zero included) gives a usable state.
class PortableRandom {
 public:
  explicit PortableRandom(uint64_t seed);

  uint64_t Next();
  // Uniform in [0, bound) without modulo bias (Lemire, "Fast Random Integer
  // Generation in an Interval", 2019). bound must be > 0.
  uint64_t Below(uint64_t bound);
  // Fills `out` with successive Next() values in native byte order, the last
  // one cut short when out.size() is not a multiple of 8: ceil(size / 8) draws.
  void Fill(std::span<std::byte> out);

 private:
  std::array<uint64_t, 4> state_;
};

}  // namespace iowatch::probes
