// Where the next I/O of one direction goes, and which direction it takes, as
// fio decides them: OffsetGenerator yields block-aligned offsets inside the
// job's region, either in order (wrapping to the start, so time_based jobs
// loop over the region as fio's do) or uniformly at random over the region's
// whole blocks; RwMix picks read or write for rw/randrw by rwmixread.
// Randomness comes from PortableRandom (portable_random.h), so a seed means
// the same offsets on every build, which is what randrepeat and randseed
// promise. The sequences are not fio's own; only the guarantees are.
// Thread-safety: none; each generator has one owner. SeedsFor is safe to
// call from any thread.
#pragma once

#include <cstdint>

#include "probes/spec/job_spec.h"
#include "probes/stats/portable_random.h"

namespace iowatch::probes {

// The seed fio-style repeatable runs use when no randseed is given. fio seeds
// from its FIO_RANDSEED constant, 0xb1899bed; we keep that value so the
// constant is recognisable, though our generator differs from fio's.
inline constexpr uint64_t kDefaultRandSeed = 0xb1899bedULL;

// The independent random streams of one job, all derived from one base seed.
struct JobSeeds {
  uint64_t base = 0;
  uint64_t read_offsets = 0;
  uint64_t write_offsets = 0;
  uint64_t rw_mix = 0;
  uint64_t buffer_fill = 0;
};

// Base seed: randseed if set; else kDefaultRandSeed when randrepeat; else
// fresh entropy from std::random_device. Each stream gets a different seed so
// reads and writes do not visit the same offsets in lockstep. A clone other
// than the run's first (thread_number > 0) mixes its number into the base.
JobSeeds SeedsFor(const JobSpec& spec);
JobSeeds SeedsFromBase(uint64_t base);

class OffsetGenerator {
 public:
  // The region [region_offset, region_offset + region_size) holds
  // region_size / block_size whole blocks (a partial tail block is never
  // used, as in fio); there must be at least one. A sequential generator
  // with sequence_add (rw=read:N) steps block_size + sequence_add bytes: a
  // forward step starts at the region's start and wraps to it, a backward
  // one starts at the last whole block and wraps to it.
  OffsetGenerator(uint64_t region_offset, uint64_t region_size, uint64_t block_size, bool random,
                  uint64_t seed, int64_t sequence_add = 0);

  // region_offset + k · block_size for the next block k (region_offset +
  // the next position, with sequence_add).
  uint64_t Next() {
    if (stepped_) return NextStepped();
    uint64_t block;
    if (random_) {
      block = random_source_.Below(blocks_);
    } else {
      block = next_block_;
      next_block_ = next_block_ + 1 == blocks_ ? 0 : next_block_ + 1;
    }
    return region_offset_ + block * block_size_;
  }

  uint64_t BlockCount() const { return blocks_; }

 private:
  uint64_t region_offset_;
  uint64_t block_size_;
  uint64_t blocks_;
  bool random_;
  uint64_t NextStepped();

  uint64_t next_block_ = 0;
  bool stepped_ = false;   // sequential with sequence_add
  int64_t step_ = 0;       // bytes from one offset to the next, when stepped_
  uint64_t position_ = 0;  // the next offset relative to the region, when stepping
  PortableRandom random_source_;
};

// One Bernoulli draw per I/O with P(read) = read_percent / 100. fio switches
// direction in runs (rwmixcycle); per-I/O draws give the same long-run ratio.
class RwMix {
 public:
  RwMix(uint32_t read_percent, uint64_t seed) : read_percent_(read_percent), random_(seed) {}

  bool NextIsRead() { return random_.Below(100) < read_percent_; }

 private:
  uint64_t read_percent_;
  PortableRandom random_;
};

}  // namespace iowatch::probes
