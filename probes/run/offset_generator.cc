#include "probes/run/offset_generator.h"

#include <random>

namespace iowatch::probes {
namespace {

// A seed per stream: mixing the stream number in before splitmix64 makes the
// streams unrelated even for adjacent base seeds.
uint64_t DeriveSeed(uint64_t base, uint64_t stream) {
  uint64_t state = base ^ (stream * 0xd1b54a32d192ed03ULL);
  return SplitMix64(state);
}

// Above the streams SeedsFromBase takes (1..4).
constexpr uint64_t kCloneStreams = 256;

}  // namespace

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
  uint64_t base = 0;
  if (spec.randseed) {
    base = *spec.randseed;
  } else if (spec.randrepeat) {
    base = kDefaultRandSeed;
  } else {
    std::random_device entropy;
    base = (static_cast<uint64_t>(entropy()) << 32) ^ entropy();
  }
  // Clones draw apart (fio seeds each thread from its number), the first as
  // a job of one clone always has.
  if (spec.thread_number != 0) base = DeriveSeed(base, kCloneStreams + spec.thread_number);
  return SeedsFromBase(base);
}

OffsetGenerator::OffsetGenerator(uint64_t region_offset, uint64_t region_size, uint64_t block_size,
                                 bool random, uint64_t seed, int64_t sequence_add)
    : region_offset_(region_offset),
      block_size_(block_size),
      blocks_(block_size == 0 ? 0 : region_size / block_size),
      random_(random),
      random_source_(seed) {
  // A region without a whole block cannot be addressed; callers validate
  // first, and this keeps Next() well-defined (always block 0) regardless.
  if (blocks_ == 0) blocks_ = 1;
  if (!random && sequence_add != 0) {
    stepped_ = true;
    step_ = static_cast<int64_t>(block_size_) + sequence_add;  // 0 (read:-bs) repeats one block
    if (step_ < 0) position_ = (blocks_ - 1) * block_size_;
  }
}

uint64_t OffsetGenerator::NextStepped() {
  const uint64_t offset = position_;
  const uint64_t last = (blocks_ - 1) * block_size_;  // the last whole block's start
  if (step_ >= 0) {
    const auto step = static_cast<uint64_t>(step_);
    position_ = position_ + step > last ? 0 : position_ + step;
  } else {
    const auto step = static_cast<uint64_t>(-step_);
    position_ = position_ < step ? last : position_ - step;
  }
  return region_offset_ + offset;
}

}  // namespace iowatch::probes
