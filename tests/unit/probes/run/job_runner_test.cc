// JobRunner, OffsetGenerator and the clocks, driven through NullEngine and
// small fake engines under a ManualProbeClock, so every test is
// deterministic and runs in milliseconds.
#include "probes/run/job_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <set>
#include <thread>
#include <vector>

#include "probes/engines/null_engine.h"
#include "probes/run/offset_generator.h"
#include "probes/run/probe_clock.h"

namespace iowatch::probes {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

constexpr uint64_t kMs = 1'000'000;

// ---------------------------------------------------------------------------
// Seeds, OffsetGenerator, RwMix

TEST(SeedsTest, RandseedThenRandrepeatThenEntropy) {
  JobSpec spec;
  spec.randseed = 1234;
  EXPECT_EQ(SeedsFor(spec).base, 1234u);
  spec.randseed.reset();
  spec.randrepeat = true;
  EXPECT_EQ(SeedsFor(spec).base, kDefaultRandSeed);
  spec.randrepeat = false;
  EXPECT_NE(SeedsFor(spec).base, SeedsFor(spec).base);

  const JobSeeds seeds = SeedsFromBase(1);
  const std::set<uint64_t> distinct = {seeds.read_offsets, seeds.write_offsets, seeds.rw_mix,
                                       seeds.buffer_fill};
  EXPECT_EQ(distinct.size(), 4u);
}

TEST(OffsetGeneratorTest, SequentialCoversRegionInOrderAndWraps) {
  // 10 whole blocks and a partial one that must never be used.
  OffsetGenerator gen(/*region_offset=*/4096, /*region_size=*/10 * 512 + 100, 512,
                      /*random=*/false, 1);
  EXPECT_EQ(gen.BlockCount(), 10u);
  for (int round = 0; round < 3; ++round) {
    for (uint64_t block = 0; block < 10; ++block) {
      EXPECT_EQ(gen.Next(), 4096 + block * 512) << "round " << round;
    }
  }
}

TEST(OffsetGeneratorTest, OffsetIncrementMakesHolesOrRunsBackward) {
  // rw=read:1k, bs=512 over 10 whole blocks: every third 512-byte block, wrapping to the start.
  OffsetGenerator holes(4096, 10 * 512 + 100, 512, /*random=*/false, 1, /*sequence_add=*/1024);
  for (uint64_t expected : {0, 1536, 3072, 4608, 0, 1536}) EXPECT_EQ(holes.Next(), 4096 + expected);
  // rw=read:-1k, bs=512: from the last whole block down, then from the last again.
  OffsetGenerator backward(4096, 10 * 512 + 100, 512, /*random=*/false, 1, -1024);
  for (uint64_t block : {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 9, 8}) {
    EXPECT_EQ(backward.Next(), 4096 + block * 512);
  }
  // rw=read:-512, bs=512: the same block again and again, as in fio.
  OffsetGenerator same(0, 10 * 512, 512, /*random=*/false, 1, -512);
  EXPECT_EQ(same.Next(), 0u);
  EXPECT_EQ(same.Next(), 0u);
  // A random generator ignores it (ValidateJobSpec refuses the combination).
  OffsetGenerator random(0, 10 * 512, 512, /*random=*/true, 1, -1024);
  for (int i = 0; i < 20; ++i) EXPECT_LT(random.Next(), 10u * 512);
}

TEST(OffsetGeneratorTest, RandomStaysInsideAlignedAndUniform) {
  constexpr uint64_t kRegionOffset = 1000;  // not a multiple of bs: alignment is relative
  constexpr uint64_t kBlocks = 64;
  constexpr uint64_t kBs = 4096;
  constexpr int kDraws = 64'000;
  OffsetGenerator gen(kRegionOffset, kBlocks * kBs + 17, kBs, /*random=*/true, 99);
  std::vector<int> counts(kBlocks, 0);
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t offset = gen.Next();
    ASSERT_GE(offset, kRegionOffset);
    ASSERT_LE(offset + kBs, kRegionOffset + kBlocks * kBs);
    ASSERT_EQ((offset - kRegionOffset) % kBs, 0u);
    ++counts[(offset - kRegionOffset) / kBs];
  }
  // Chi-square with 63 degrees of freedom has mean 63 and sd ≈ 11.2; 150 is
  // far beyond any plausible value for a uniform source.
  const double expected = static_cast<double>(kDraws) / kBlocks;
  double chi2 = 0;
  for (const int c : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 150.0);
}

std::vector<uint64_t> Draw(uint64_t seed, int n) {
  OffsetGenerator gen(0, 1 << 30, 4096, /*random=*/true, seed);
  std::vector<uint64_t> offsets;
  for (int i = 0; i < n; ++i) offsets.push_back(gen.Next());
  return offsets;
}

TEST(OffsetGeneratorTest, RandomIsReproducibleBySeed) {
  EXPECT_EQ(Draw(5, 100), Draw(5, 100));
  EXPECT_NE(Draw(5, 100), Draw(6, 100));
}

TEST(RwMixTest, ReadShareFollowsRwmixread) {
  for (const uint32_t percent : {0u, 30u, 70u, 100u}) {
    RwMix mix(percent, 3);
    int reads = 0;
    for (int i = 0; i < 100'000; ++i) reads += mix.NextIsRead() ? 1 : 0;
    EXPECT_NEAR(reads / 100'000.0, percent / 100.0, 0.01) << percent;
  }
}

// ---------------------------------------------------------------------------
// Helpers for RunJob

JobSpec Spec(RwMode rw, uint64_t size, uint64_t bs = 4096) {
  JobSpec spec;
  spec.rw = rw;
  spec.size = size;
  spec.block_size = bs;
  spec.engine = EngineKind::kNull;
  return spec;
}

RunTarget Target(uint64_t size, uint64_t offset = 0) {
  RunTarget target;
  target.region_offset = offset;
  target.region_size = size;
  return target;
}

RunOptions Options(ProbeClock& clock) {
  RunOptions options;
  options.clock = &clock;
  return options;
}

ProbeResult MustRun(const JobSpec& spec, ProbeEngine& engine, const RunTarget& target,
                    const RunOptions& options) {
  auto result = RunJob(spec, engine, target, options);
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().ToString());
  return result ? std::move(*result) : ProbeResult{};
}

// A scriptable engine: completes requests on Reap with the result `outcome`
// chooses, optionally asynchronously (advancing the manual clock in Submit
// and Reap to model submission and device time), or never.
class FakeEngine final : public ProbeEngine {
 public:
  struct Behaviour {
    bool synchronous = true;
    bool never_complete = false;
    bool sleep_real_time = false;  // never_complete: really wait `timeout` in Reap
    ManualProbeClock* clock = nullptr;
    uint64_t submit_ns = 0;  // clock advance inside Submit (async slat)
    uint64_t device_ns = 0;  // clock advance inside Reap (clat)
    std::function<int64_t(const IoRequest&, size_t index)> outcome;  // default: full length
    bool refuse_open = false;
    std::vector<EngineFallback> fallbacks;  // what Open reports it gave up
    bool abandon_on_close = false;          // Close gives up on what is in flight
    // With abandon_on_close: TakeAbandoned hands a context whose I/Os
    // complete by these counts, one per Poll (null: none handed).
    std::shared_ptr<std::vector<uint32_t>> completing;
    uint32_t submit_limit = 0;  // > 0: Submit starts at most this many
  };

  // The behaviours the tests use, spelled out (designated initializers that
  // omit trailing members trip -Wmissing-field-initializers).
  static Behaviour Sync(ManualProbeClock* clock = nullptr) {
    Behaviour b;
    b.clock = clock;
    return b;
  }
  static Behaviour Async(ManualProbeClock* clock, uint64_t submit_ns, uint64_t device_ns) {
    Behaviour b;
    b.synchronous = false;
    b.clock = clock;
    b.submit_ns = submit_ns;
    b.device_ns = device_ns;
    return b;
  }
  static Behaviour Hung(ManualProbeClock* clock) {
    Behaviour b;
    b.never_complete = true;
    b.sleep_real_time = clock == nullptr;
    b.clock = clock;
    return b;
  }
  static Behaviour Outcome(std::function<int64_t(const IoRequest&, size_t)> outcome,
                           bool synchronous = true) {
    Behaviour b;
    b.synchronous = synchronous;
    b.outcome = std::move(outcome);
    return b;
  }

  explicit FakeEngine(Behaviour behaviour) : behaviour_(std::move(behaviour)) {}

  Status DoOpen(const EngineTarget& target, uint32_t depth) override {
    if (behaviour_.refuse_open) {
      return MakeError(ErrorCode::kUnsupported, "fake: refused, try --ioengine=psync");
    }
    depth_ = depth;
    target_buffers_ = target.buffers;
    return {};
  }
  Status DoQueue(const IoRequest& request) override {
    // What the first I/O finds in the buffers (they are freed when RunJob
    // returns, and filled for writes only once the engine is open).
    if (buffers_.empty()) {
      for (const std::span<std::byte> buffer : target_buffers_) {
        buffers_.push_back({buffer.size(), reinterpret_cast<uintptr_t>(buffer.data()),
                            std::count(buffer.begin(), buffer.end(), std::byte{0})});
      }
    }
    const size_t busy = queued_.size() + in_flight_.size();
    EXPECT_LT(busy, depth_) << "more than iodepth requests";
    if (busy >= depth_) return MakeError(ErrorCode::kInvalidArgument, "fake: full");
    if (request.op == IoOp::kFsync) fsync_saw_in_flight_.push_back(busy);
    queue_times_.push_back(behaviour_.clock != nullptr ? behaviour_.clock->NowNs() : 0);
    requests_.push_back(request);
    queued_.push_back(requests_.size() - 1);
    return {};
  }
  Result<uint32_t> DoSubmit() override {
    auto n = static_cast<uint32_t>(queued_.size());
    if (behaviour_.submit_limit > 0) n = std::min(n, behaviour_.submit_limit);
    in_flight_.insert(in_flight_.end(), queued_.begin(), queued_.begin() + n);
    queued_.erase(queued_.begin(), queued_.begin() + n);
    max_in_flight_ = std::max(max_in_flight_, in_flight_.size());
    if (n > 0) submit_sizes_.push_back(n);
    if (behaviour_.clock != nullptr && n > 0) behaviour_.clock->Advance(behaviour_.submit_ns);
    return n;
  }
  Result<size_t> DoReap(size_t min, std::span<IoCompletion> out, nanoseconds timeout) override {
    reap_calls_.push_back({min, out.size()});
    if (behaviour_.never_complete) {
      if (behaviour_.clock != nullptr) {
        behaviour_.clock->Advance(static_cast<uint64_t>(timeout.count()));
      }
      if (behaviour_.sleep_real_time) std::this_thread::sleep_for(timeout);
      return size_t{0};
    }
    if (behaviour_.clock != nullptr && !in_flight_.empty()) {
      behaviour_.clock->Advance(behaviour_.device_ns);
    }
    const size_t n = std::min(out.size(), in_flight_.size());
    for (size_t i = 0; i < n; ++i) {
      const size_t index = in_flight_[i];
      const IoRequest& request = requests_[index];
      out[i] = {request.tag, behaviour_.outcome ? behaviour_.outcome(request, index)
                                                : static_cast<int64_t>(request.length)};
    }
    in_flight_.erase(in_flight_.begin(), in_flight_.begin() + static_cast<std::ptrdiff_t>(n));
    return n;
  }
  void DoClose() noexcept override {
    closed_ = true;
    if (behaviour_.abandon_on_close) abandoned_ = static_cast<uint32_t>(in_flight_.size());
  }
  uint32_t AbandonedIos() const override { return abandoned_; }
  // The hung I/Os complete when the test says so: `completing` at each Poll.
  struct FakeContext final : AbandonedIo {
    FakeContext(uint32_t ios, std::shared_ptr<std::vector<uint32_t>> arriving)
        : in_flight(ios), completing(std::move(arriving)) {}
    uint32_t Poll() noexcept override {
      if (!completing->empty()) {
        in_flight -= std::min(in_flight, completing->front());
        completing->erase(completing->begin());
      }
      return in_flight;
    }
    uint32_t in_flight;
    std::shared_ptr<std::vector<uint32_t>> completing;
  };
  std::unique_ptr<AbandonedIo> TakeAbandoned() override {
    if (abandoned_ == 0 || !behaviour_.completing) return nullptr;
    return std::make_unique<FakeContext>(abandoned_, behaviour_.completing);
  }
  bool IsSynchronous() const override { return behaviour_.synchronous; }
  std::string_view Name() const override { return "fake"; }
  bool MovesData() const override { return false; }  // no descriptor: the tests' targets have none
  std::span<const EngineFallback> Fallbacks() const override { return behaviour_.fallbacks; }

  Behaviour behaviour_;
  uint32_t depth_ = 0;
  struct BufferSeen {
    size_t size;
    uintptr_t address;
    std::ptrdiff_t zero_bytes;
  };
  std::vector<BufferSeen> buffers_;
  std::span<const std::span<std::byte>> target_buffers_;
  std::vector<IoRequest> requests_;
  std::vector<uint64_t> queue_times_;
  std::vector<size_t> queued_;
  std::vector<size_t> in_flight_;
  std::vector<size_t> fsync_saw_in_flight_;
  size_t max_in_flight_ = 0;
  std::vector<uint32_t> submit_sizes_;  // requests per non-empty Submit
  struct ReapCall {
    size_t min;       // completions the runner waits for
    size_t capacity;  // completions it takes at most
  };
  std::vector<ReapCall> reap_calls_;
  bool closed_ = false;
  uint32_t abandoned_ = 0;
};

// ---------------------------------------------------------------------------
// RunJob: submission batches (fio's iodepth_batch_submit)

TEST(RunJobTest, SubmitsEachIoAloneByDefaultAndInBatchesWhenAsked) {
  const std::vector<std::pair<uint32_t, std::vector<uint32_t>>> cases = {
      {1, {1, 1, 1, 1, 1, 1, 1, 1}},  // fio's default: no plug merging of adjacent I/Os
      {4, {4, 4}},
      {0, {8}},  // 0 = iodepth
  };
  for (const auto& [batch, want] : cases) {
    ManualProbeClock clock;
    FakeEngine engine(FakeEngine::Async(&clock, 100, 1000));
    JobSpec spec = Spec(RwMode::kRead, 8 * 4096);
    spec.iodepth = 8;
    spec.iodepth_batch_submit = batch;
    RunOptions options;
    options.clock = &clock;
    const ProbeResult result = MustRun(spec, engine, Target(8 * 4096), options);
    EXPECT_EQ(result.read.ios, 8u) << "batch " << batch;
    EXPECT_EQ(engine.submit_sizes_, want) << "batch " << batch;
  }
}

// ---------------------------------------------------------------------------
// RunJob: reaping (fio's iodepth_batch_complete_min/max)

// The fake completes everything in flight at once, as a device that
// completes in bursts: fio's default still takes one completion per reap
// and refills its slot before the next, so the queue stays full.
TEST(RunJobTest, TakesOneCompletionPerReapByDefaultSoTheQueueStaysFull) {
  ManualProbeClock clock;
  FakeEngine engine(FakeEngine::Async(&clock, 100, 1000));
  JobSpec spec = Spec(RwMode::kRandRead, 64 * 4096);
  spec.iodepth = 8;
  RunOptions options;
  options.clock = &clock;
  const ProbeResult result = MustRun(spec, engine, Target(64 * 4096), options);
  EXPECT_EQ(result.read.ios, 64u);
  ASSERT_FALSE(engine.reap_calls_.empty());
  for (const auto& call : engine.reap_calls_) {
    EXPECT_EQ(call.capacity, 1u);
    EXPECT_LE(call.min, 1u);
  }
  // After the first fill, each submission finds the other 7 still in flight.
  ASSERT_GT(engine.submit_sizes_.size(), 8u);
  EXPECT_EQ(engine.max_in_flight_, 8u);
}

TEST(RunJobTest, ReapsUpToIodepthBatchCompleteMaxAndWaitsForTheMin) {
  const struct {
    uint32_t min, max;
    size_t want_min, want_capacity;
  } cases[] = {
      {1, 4, 1, 4},  {3, 0, 3, 3},  // max unset = the min, as fio
      {3, 2, 3, 3},                 // max below the min = the min, as fio
      {0, 0, 1, 1},                 // 0 waits like 1: no busy polling
      {1, 64, 1, 8},                // never more than iodepth
  };
  for (const auto& c : cases) {
    ManualProbeClock clock;
    FakeEngine engine(FakeEngine::Async(&clock, 100, 1000));
    JobSpec spec = Spec(RwMode::kRandRead, 64 * 4096);
    spec.iodepth = 8;
    spec.iodepth_batch_complete_min = c.min;
    spec.iodepth_batch_complete_max = c.max;
    RunOptions options;
    options.clock = &clock;
    const ProbeResult result = MustRun(spec, engine, Target(64 * 4096), options);
    EXPECT_EQ(result.read.ios, 64u);
    ASSERT_FALSE(engine.reap_calls_.empty());
    for (const auto& call : engine.reap_calls_) {
      EXPECT_EQ(call.capacity, c.want_capacity) << c.min << "/" << c.max;
      if (call.min != 0) {
        EXPECT_EQ(call.min, c.want_min) << c.min << "/" << c.max;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// RunJob: amounts

TEST(RunJobTest, SequentialReadDoesSizeOverBsInOrder) {
  ManualProbeClock clock;
  NullEngine engine;
  engine.KeepHistory(true);
  const ProbeResult result =
      MustRun(Spec(RwMode::kRead, 1 << 20), engine, Target(1 << 20, 8192), Options(clock));
  EXPECT_EQ(result.end, RunEnd::kCompleted);
  EXPECT_EQ(result.read.ios, 256u);
  EXPECT_EQ(result.read.bytes, 1u << 20);
  EXPECT_EQ(result.write.ios, 0u);
  ASSERT_EQ(engine.History().size(), 256u);
  for (size_t i = 0; i < 256; ++i) {
    EXPECT_EQ(engine.History()[i].op, IoOp::kRead);
    EXPECT_EQ(engine.History()[i].offset, 8192 + i * 4096);
    EXPECT_EQ(engine.History()[i].length, 4096u);
  }
  EXPECT_EQ(result.read.clat.Count(), 256u);
  EXPECT_EQ(result.read.slat.Count(), 0u) << "sync engines record no slat";
}

TEST(RunJobTest, WriteAndRandrwDoExactlySizeOverBs) {
  ManualProbeClock clock;
  {
    NullEngine engine;
    const ProbeResult result =
        MustRun(Spec(RwMode::kWrite, 512 * 1024), engine, Target(512 * 1024), Options(clock));
    EXPECT_EQ(result.write.ios, 128u);
    EXPECT_EQ(result.write.bytes, 512u * 1024);
    EXPECT_EQ(result.read.ios, 0u);
  }
  {
    NullEngine engine;
    JobSpec spec = Spec(RwMode::kRandReadWrite, 4 << 20);
    spec.iodepth = 4;
    const ProbeResult result = MustRun(spec, engine, Target(4 << 20), Options(clock));
    EXPECT_EQ(result.read.ios + result.write.ios, 1024u);
    EXPECT_EQ(result.read.bytes + result.write.bytes, 4u << 20);
    EXPECT_GT(result.read.ios, 400u);
    EXPECT_GT(result.write.ios, 400u);
  }
}

TEST(RunJobTest, RandrwMixFollowsRwmixread) {
  ManualProbeClock clock;
  NullEngine engine;
  JobSpec spec = Spec(RwMode::kRandReadWrite, 4096ull * 100'000);
  spec.rwmixread = 70;
  const ProbeResult result = MustRun(spec, engine, Target(4096ull * 100'000), Options(clock));
  ASSERT_EQ(result.read.ios + result.write.ios, 100'000u);
  EXPECT_NEAR(static_cast<double>(result.read.ios) / 100'000, 0.70, 0.01);
}

TEST(RunJobTest, NumberIosAndIoSizeLimitTheRun) {
  ManualProbeClock clock;
  {
    NullEngine engine;
    JobSpec spec = Spec(RwMode::kRandRead, 1 << 20);
    spec.number_ios = 100;
    EXPECT_EQ(MustRun(spec, engine, Target(1 << 20), Options(clock)).read.ios, 100u);
  }
  {
    // io_size beyond size: the sequential job wraps over its region.
    NullEngine engine;
    engine.KeepHistory(true);
    JobSpec spec = Spec(RwMode::kRead, 64 * 1024);
    spec.io_size = 256 * 1024;
    const ProbeResult result = MustRun(spec, engine, Target(64 * 1024), Options(clock));
    EXPECT_EQ(result.read.ios, 64u);
    EXPECT_EQ(result.read.bytes, 256u * 1024);
    ASSERT_EQ(engine.History().size(), 64u);
    EXPECT_EQ(engine.History()[16].offset, 0u);
    EXPECT_EQ(engine.History()[63].offset, 15u * 4096);
  }
}

// ---------------------------------------------------------------------------
// RunJob: seeds through the runner

std::vector<uint64_t> RandReadOffsets(const JobSpec& spec) {
  ManualProbeClock clock;
  NullEngine engine;
  engine.KeepHistory(true);
  MustRun(spec, engine, Target(spec.size), Options(clock));
  std::vector<uint64_t> offsets;
  for (const IoRequest& request : engine.History()) offsets.push_back(request.offset);
  return offsets;
}

TEST(RunJobTest, RandomOffsetsRepeatBySeed) {
  JobSpec spec = Spec(RwMode::kRandRead, 64 << 20);
  spec.number_ios = 200;
  const auto default_seed = RandReadOffsets(spec);
  EXPECT_EQ(default_seed, RandReadOffsets(spec)) << "randrepeat=1 repeats";
  spec.randseed = 42;
  const auto seeded = RandReadOffsets(spec);
  EXPECT_EQ(seeded, RandReadOffsets(spec));
  EXPECT_NE(seeded, default_seed);
  spec.randseed = 43;
  EXPECT_NE(seeded, RandReadOffsets(spec));
  spec.randseed.reset();
  spec.randrepeat = false;
  EXPECT_NE(RandReadOffsets(spec), RandReadOffsets(spec));
}

TEST(RunJobTest, BuffersAreAlignedFilledAndOnePerSlot) {
  ManualProbeClock clock;
  FakeEngine engine(FakeEngine::Sync());
  JobSpec spec = Spec(RwMode::kWrite, 1 << 20, 8192);
  spec.iodepth = 5;
  RunTarget target = Target(1 << 20);
  target.memory_alignment = 4096;
  MustRun(spec, engine, target, Options(clock));
  ASSERT_EQ(engine.buffers_.size(), 5u);
  for (const auto& buffer : engine.buffers_) {
    EXPECT_EQ(buffer.size, 8192u);
    EXPECT_EQ(buffer.address % 4096, 0u);
    EXPECT_LT(buffer.zero_bytes, 8192 / 50) << "buffers hold random bytes";
  }
  for (const IoRequest& request : engine.requests_) EXPECT_LT(request.buffer_index, 5u);
  EXPECT_TRUE(engine.closed_);
}

// ---------------------------------------------------------------------------
// RunJob: time

TEST(RunJobTest, TimeBasedStopsAtRuntime) {
  ManualProbeClock clock(/*tick_ns=*/1000);
  NullEngine engine;
  JobSpec spec = Spec(RwMode::kRandRead, 1 << 20);
  spec.time_based = true;
  spec.runtime = milliseconds(100);
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), Options(clock));
  EXPECT_EQ(result.end, RunEnd::kCompleted);
  EXPECT_GE(result.elapsed, milliseconds(100));
  EXPECT_LT(result.elapsed, milliseconds(101));
  EXPECT_GT(result.read.ios, 1000u);
  EXPECT_EQ(result.read.runtime, result.elapsed);
  const double runtime_s = static_cast<double>(result.read.RuntimeMs()) / 1000;
  EXPECT_NEAR(result.read.Iops() * runtime_s, static_cast<double>(result.read.ios),
              0.01 * static_cast<double>(result.read.ios));
  // Each I/O took exactly one tick between its two clock reads.
  EXPECT_EQ(result.read.clat.Min(), 1000u);
  EXPECT_EQ(result.read.lat.Max(), 1000u);
}

TEST(RunJobTest, RateIopsPacesIssues) {
  ManualProbeClock clock(/*tick_ns=*/100);
  FakeEngine engine(FakeEngine::Sync(&clock));
  JobSpec spec = Spec(RwMode::kRandRead, 1 << 20);
  spec.time_based = true;
  spec.runtime = seconds(2);
  spec.rate_iops_read = 500;
  spec.iodepth = 4;
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), Options(clock));
  EXPECT_NEAR(static_cast<double>(result.read.ios), 1000.0, 10.0);
  EXPECT_NEAR(result.read.Iops(), 500.0, 5.0);
  for (size_t i = 1; i < engine.queue_times_.size(); ++i) {
    ASSERT_GE(engine.queue_times_[i] - engine.queue_times_[i - 1], 2 * kMs) << i;
  }
}

TEST(RunJobTest, RateIopsPacesEachDirectionOfAMix) {
  ManualProbeClock clock(/*tick_ns=*/100);
  NullEngine engine;
  JobSpec spec = Spec(RwMode::kReadWrite, 1 << 20);
  spec.time_based = true;
  spec.runtime = seconds(1);
  spec.rwmixread = 50;
  spec.rate_iops_read = 200;
  spec.rate_iops_write = 200;
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), Options(clock));
  // One mixed stream: each direction waits its turn, so neither can exceed
  // its rate.
  EXPECT_LE(result.read.ios, 201u);
  EXPECT_LE(result.write.ios, 201u);
  EXPECT_GT(result.read.ios + result.write.ios, 150u);
}

TEST(RunJobTest, RampTimeDiscardsEarlyIos) {
  ManualProbeClock clock(/*tick_ns=*/100);
  FakeEngine engine(FakeEngine::Sync(&clock));
  JobSpec spec = Spec(RwMode::kRead, 1 << 20);
  spec.time_based = true;
  spec.runtime = seconds(1);
  spec.ramp_time = milliseconds(500);
  spec.rate_iops_read = 1000;
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), Options(clock));
  EXPECT_NEAR(static_cast<double>(engine.requests_.size()), 1500.0, 3.0);
  EXPECT_NEAR(static_cast<double>(result.read.ios), 1000.0, 2.0);
  EXPECT_EQ(result.read.clat.Count(), result.read.ios);
  EXPECT_GE(result.elapsed, seconds(1));
  EXPECT_LT(result.elapsed, milliseconds(1002));
}

TEST(RunJobTest, RampTimeThenFullAmount) {
  ManualProbeClock clock(/*tick_ns=*/1000);
  NullEngine engine;
  engine.KeepHistory(true);
  JobSpec spec = Spec(RwMode::kRead, 1 << 20);
  spec.ramp_time = milliseconds(1);
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), Options(clock));
  EXPECT_EQ(result.read.ios, 256u) << "the amount is measured after the ramp";
  EXPECT_GT(engine.History().size(), 256u);
}

// on_measuring marks where the daemon starts measuring the device's other
// I/O: once, when the ramp is over (at the start without a ramp).
TEST(RunJobTest, OnMeasuringIsCalledOnceWhenTheRampEnds) {
  for (const auto ramp : {milliseconds(0), milliseconds(5)}) {
    ManualProbeClock clock(/*tick_ns=*/1000);
    NullEngine engine;
    engine.KeepHistory(true);
    JobSpec spec = Spec(RwMode::kRead, 1 << 20);
    spec.ramp_time = ramp;
    RunOptions options = Options(clock);
    int calls = 0;
    size_t issued_then = 0;
    options.on_measuring = [&] {
      ++calls;
      issued_then = engine.History().size();
    };
    const ProbeResult result = MustRun(spec, engine, Target(1 << 20), options);
    EXPECT_EQ(calls, 1) << ramp.count();
    EXPECT_EQ(result.read.ios, 256u);
    if (ramp.count() == 0) {
      EXPECT_EQ(issued_then, 0u);
    } else {
      EXPECT_GT(issued_then, 0u) << "the ramp's I/Os come before";
    }
  }
}

TEST(RunJobTest, CancelFromProgressEndsInterruptedWithPartialCounts) {
  ManualProbeClock clock(/*tick_ns=*/1000);
  NullEngine engine;
  JobSpec spec = Spec(RwMode::kRandRead, 1 << 20);
  spec.time_based = true;
  spec.runtime = seconds(10);
  std::atomic<bool> cancel{false};
  std::vector<RunProgress> reports;
  RunOptions options = Options(clock);
  options.cancel = &cancel;
  options.progress_interval = milliseconds(10);
  options.on_progress = [&](const RunProgress& progress) {
    reports.push_back(progress);
    if (reports.size() == 3) cancel = true;
  };
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), options);
  EXPECT_EQ(result.end, RunEnd::kInterrupted);
  EXPECT_GT(result.read.ios, 0u);
  EXPECT_LT(result.elapsed, milliseconds(31));
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_NEAR(reports[1].fraction_done, 0.002, 0.0002);
  EXPECT_GT(reports[1].read_iops, 100'000.0);
  EXPECT_EQ(reports[1].write_iops, 0.0);
  EXPECT_NEAR(reports[1].read_bytes_per_second, reports[1].read_iops * 4096, 1.0);
  EXPECT_NEAR(static_cast<double>(reports[1].eta.count()), 9.98e9, 1e7);
  EXPECT_FALSE(reports[1].ramping);
}

TEST(RunJobTest, ProgressReportsRamping) {
  ManualProbeClock clock(/*tick_ns=*/1000);
  NullEngine engine;
  JobSpec spec = Spec(RwMode::kRead, 1 << 20);
  spec.time_based = true;
  spec.runtime = milliseconds(100);
  spec.ramp_time = milliseconds(50);
  std::vector<RunProgress> reports;
  RunOptions options = Options(clock);
  options.progress_interval = milliseconds(20);
  options.on_progress = [&](const RunProgress& progress) { reports.push_back(progress); };
  MustRun(spec, engine, Target(1 << 20), options);
  ASSERT_GE(reports.size(), 6u);
  EXPECT_TRUE(reports[0].ramping);
  EXPECT_EQ(reports[0].fraction_done, 0.0);
  EXPECT_FALSE(reports.back().ramping);
  EXPECT_GT(reports.back().fraction_done, 0.5);
}

TEST(RunJobTest, HungEngineTimesOutAtHardLimit) {
  ManualProbeClock clock(/*tick_ns=*/1000);
  FakeEngine engine(FakeEngine::Hung(&clock));
  JobSpec spec = Spec(RwMode::kRandRead, 1 << 20);
  spec.iodepth = 8;
  RunOptions options = Options(clock);
  options.hard_limit = seconds(3);
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), options);
  EXPECT_EQ(result.end, RunEnd::kTimedOut);
  EXPECT_EQ(result.read.ios, 0u);
  EXPECT_EQ(engine.requests_.size(), 8u);
  EXPECT_GE(result.elapsed, seconds(3));
  EXPECT_LT(result.elapsed, milliseconds(3101));
  EXPECT_TRUE(engine.closed_);
}

// Adversarial review: when the drain after a hard limit gave up,
// the buffers were freed while a device that recovers later could still
// complete reads into them. They are kept for good: writing into them after
// RunJob returned is what such a device would do, and ASan (the sanitizer
// tree) fails this test should the memory have been freed.
TEST(RunJobTest, BuffersOfAbandonedIosAreNeverFreed) {
  ManualProbeClock clock(/*tick_ns=*/1000);
  FakeEngine::Behaviour hung = FakeEngine::Hung(&clock);
  hung.abandon_on_close = true;
  FakeEngine engine(hung);
  JobSpec spec = Spec(RwMode::kRandRead, 1 << 20);
  spec.iodepth = 4;
  RunOptions options = Options(clock);
  options.hard_limit = seconds(1);
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), options);
  EXPECT_EQ(result.end, RunEnd::kTimedOut);
  EXPECT_EQ(result.abandoned_ios, 4u);
  ASSERT_EQ(engine.buffers_.size(), 4u);  // what the first I/O saw
  for (const FakeEngine::BufferSeen& buffer : engine.buffers_) {
    auto* data = reinterpret_cast<std::byte*>(buffer.address);
    std::fill(data, data + buffer.size, std::byte{0x5a});  // the late completion
  }
}

// Adversarial review ("check and settle"): a partial submission marked the
// whole batch in flight, and the runner waited for completions of requests
// that were never started until the hard limit.
// The abandoned I/Os go to the caller with their context
// and buffers, which stay valid (ASan: written to) until every I/O
// completed; then they are freed, the context first.
TEST(RunJobTest, AbandonedIosGoToTheCallerAndAreFreedOnceTheyComplete) {
  ManualProbeClock clock(/*tick_ns=*/1000);
  FakeEngine::Behaviour hung = FakeEngine::Hung(&clock);
  hung.abandon_on_close = true;
  hung.completing = std::make_shared<std::vector<uint32_t>>(std::vector<uint32_t>{0, 3, 1});
  FakeEngine engine(hung);
  JobSpec spec = Spec(RwMode::kRandRead, 1 << 20);
  spec.iodepth = 4;
  RunOptions options = Options(clock);
  options.hard_limit = seconds(1);
  std::unique_ptr<HeldIo> held;
  options.keep_abandoned = [&](std::unique_ptr<HeldIo> h) { held = std::move(h); };
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), options);
  EXPECT_EQ(result.abandoned_ios, 4u);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->InFlight(), 4u);
  EXPECT_EQ(held->Bytes(), 4u * spec.block_size);
  EXPECT_EQ(held->Poll(), 4u);  // nothing came yet
  for (const FakeEngine::BufferSeen& buffer : engine.buffers_) {
    auto* data = reinterpret_cast<std::byte*>(buffer.address);
    std::fill(data, data + buffer.size, std::byte{0x5a});  // a late completion: still ours
  }
  EXPECT_EQ(held->Poll(), 1u);
  EXPECT_EQ(held->Poll(), 0u);
  held.reset();  // drained: freed (LeakSanitizer fails the sanitizer tree if not)
}

TEST(RunJobTest, APartialSubmissionIsSubmittedAgainNotWaitedFor) {
  ManualProbeClock clock;
  FakeEngine::Behaviour partial = FakeEngine::Async(&clock, 100, 1000);
  partial.submit_limit = 1;
  FakeEngine engine(partial);
  JobSpec spec = Spec(RwMode::kRead, 64 * 4096);
  spec.iodepth = 8;
  spec.iodepth_batch_submit = 8;
  RunOptions options = Options(clock);
  options.hard_limit = seconds(10);
  const ProbeResult result = MustRun(spec, engine, Target(64 * 4096), options);
  EXPECT_EQ(result.end, RunEnd::kCompleted);
  EXPECT_EQ(result.read.ios, 64u);
  EXPECT_LT(result.elapsed, seconds(1));
}

TEST(RunJobTest, HungEngineTimesOutOnTheRealClock) {
  FakeEngine engine(FakeEngine::Hung(nullptr));
  JobSpec spec = Spec(RwMode::kRead, 1 << 20);
  RunOptions options;
  options.hard_limit = milliseconds(200);
  const auto start = std::chrono::steady_clock::now();
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), options);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(result.end, RunEnd::kTimedOut);
  EXPECT_GE(took, milliseconds(200));
  EXPECT_LT(took, seconds(2));
}

TEST(RunJobTest, DefaultHardLimitFollowsRuntime) {
  // runtime 1 s, ramp 1 s: the limit is 12 s from the start, so the measured
  // phase (after the ramp) lasts 11 s.
  ManualProbeClock clock(/*tick_ns=*/1000);
  FakeEngine engine(FakeEngine::Hung(&clock));
  JobSpec spec = Spec(RwMode::kRead, 1 << 20);
  spec.runtime = seconds(1);
  spec.ramp_time = seconds(1);
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), Options(clock));
  EXPECT_EQ(result.end, RunEnd::kTimedOut);
  EXPECT_GE(result.elapsed, seconds(11));
  EXPECT_LT(result.elapsed, milliseconds(11'101));
}

// ---------------------------------------------------------------------------
// RunJob: errors and short transfers

TEST(RunJobTest, IoErrorEndsTheRunWithErrno) {
  ManualProbeClock clock;
  FakeEngine engine(FakeEngine::Outcome([](const IoRequest& request, size_t) -> int64_t {
    return request.offset == 4096 ? -EIO : int64_t{request.length};
  }));
  JobSpec spec = Spec(RwMode::kRead, 1 << 20);
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), Options(clock));
  EXPECT_EQ(result.end, RunEnd::kFailed);
  ASSERT_TRUE(result.error.has_value());
  EXPECT_EQ(result.error->os_errno, EIO);
  EXPECT_EQ(result.error->message, "read at offset 4096: Input/output error");
  EXPECT_EQ(result.read.errors, 1u);
  EXPECT_EQ(result.read.ios, 1u);
  EXPECT_EQ(engine.requests_.size(), 2u) << "no I/O after the failure";
}

TEST(RunJobTest, IoErrorDrainsInFlight) {
  ManualProbeClock clock;
  FakeEngine engine(FakeEngine::Outcome(
      [](const IoRequest& request, size_t index) -> int64_t {
        return index == 10 ? -ENOSPC : int64_t{request.length};
      },
      /*synchronous=*/false));
  JobSpec spec = Spec(RwMode::kWrite, 1 << 20);
  spec.iodepth = 4;
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), Options(clock));
  EXPECT_EQ(result.end, RunEnd::kFailed);
  ASSERT_TRUE(result.error.has_value());
  EXPECT_EQ(result.error->os_errno, ENOSPC);
  EXPECT_EQ(result.write.errors, 1u);
  EXPECT_EQ(result.write.ios + result.write.errors, engine.requests_.size());
  EXPECT_TRUE(engine.in_flight_.empty());
}

TEST(RunJobTest, ShortTransfersAreCountedAndTheRunGoesOn) {
  ManualProbeClock clock;
  FakeEngine engine(FakeEngine::Outcome([](const IoRequest& request, size_t index) -> int64_t {
    return index % 2 == 1 ? int64_t{request.length / 2} : int64_t{request.length};
  }));
  JobSpec spec = Spec(RwMode::kRead, 100 * 4096);
  const ProbeResult result = MustRun(spec, engine, Target(100 * 4096), Options(clock));
  EXPECT_EQ(result.end, RunEnd::kCompleted);
  EXPECT_EQ(result.read.ios, 100u);
  EXPECT_EQ(result.read.short_ios, 50u);
  EXPECT_EQ(result.read.bytes, 50u * 4096 + 50u * 2048);
}

TEST(RunJobTest, EngineOpenFailureIsReturned) {
  ManualProbeClock clock;
  FakeEngine::Behaviour refuse;
  refuse.refuse_open = true;
  FakeEngine engine(refuse);
  auto result = RunJob(Spec(RwMode::kRead, 1 << 20), engine, Target(1 << 20), Options(clock));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kUnsupported);
  EXPECT_TRUE(engine.requests_.empty());
}

// A fallback is part of what was measured: the result carries it.
TEST(RunJobTest, EngineFallbacksAreInTheResult) {
  ManualProbeClock clock;
  FakeEngine::Behaviour behaviour = FakeEngine::Sync(&clock);
  behaviour.fallbacks = {{"fixedbufs", "refused"}, {"submit_all", "old kernel"}};
  FakeEngine engine(behaviour);
  const ProbeResult result =
      MustRun(Spec(RwMode::kRead, 8 * 4096), engine, Target(8 * 4096), Options(clock));
  EXPECT_EQ(result.fallbacks, behaviour.fallbacks);
  FakeEngine plain(FakeEngine::Sync(&clock));
  EXPECT_TRUE(MustRun(Spec(RwMode::kRead, 8 * 4096), plain, Target(8 * 4096), Options(clock))
                  .fallbacks.empty());
}

TEST(RunJobTest, RegionWithoutAWholeBlockIsRejected) {
  NullEngine engine;
  ManualProbeClock clock;
  auto no_block = RunJob(Spec(RwMode::kRead, 1000), engine, Target(1000), Options(clock));
  ASSERT_FALSE(no_block.has_value());
  EXPECT_EQ(no_block.error().code, ErrorCode::kInvalidArgument);

  RunTarget misaligned = Target(1 << 20);
  misaligned.offset_alignment = 4096;
  auto bad = RunJob(Spec(RwMode::kRead, 1 << 20, 1000), engine, misaligned, Options(clock));
  ASSERT_FALSE(bad.has_value());
}

// ---------------------------------------------------------------------------
// RunJob: async engines, depth, fsync

TEST(RunJobTest, AsyncEngineRecordsSlatAndLatIsTheirSum) {
  ManualProbeClock clock(/*tick_ns=*/10);
  FakeEngine engine(FakeEngine::Async(&clock, 700, 5000));
  JobSpec spec = Spec(RwMode::kRandWrite, 1 << 20);
  spec.iodepth = 8;
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), Options(clock));
  const DirectionStats& w = result.write;
  EXPECT_EQ(w.ios, 256u);
  EXPECT_EQ(w.slat.Count(), 256u);
  EXPECT_GE(w.slat.Min(), 700u);
  EXPECT_GE(w.clat.Min(), 5000u);
  EXPECT_NEAR(w.lat.Mean(), w.slat.Mean() + w.clat.Mean(), 1e-6 * w.lat.Mean());
  EXPECT_EQ(w.lat.Min(), w.slat.Min() + w.clat.Min()) << "the same I/Os everywhere here";
  EXPECT_EQ(w.clat_histogram.Count(), 256u);
  EXPECT_EQ(w.lat_histogram.Count(), 256u);
}

TEST(RunJobTest, IodepthIsFilledButNeverExceeded) {
  ManualProbeClock clock(/*tick_ns=*/10);
  FakeEngine engine(FakeEngine::Async(&clock, 0, 1000));
  JobSpec spec = Spec(RwMode::kRandRead, 1 << 20);
  spec.iodepth = 16;
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), Options(clock));
  EXPECT_EQ(result.read.ios, 256u);
  EXPECT_EQ(engine.max_in_flight_, 16u);
}

TEST(RunJobTest, FsyncEveryNWritesAfterTheyComplete) {
  ManualProbeClock clock(/*tick_ns=*/10);
  FakeEngine engine(FakeEngine::Async(&clock, 0, 1000));
  JobSpec spec = Spec(RwMode::kWrite, 1 << 20);
  spec.iodepth = 4;
  spec.fsync = 8;
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), Options(clock));
  EXPECT_EQ(result.end, RunEnd::kCompleted);
  EXPECT_EQ(result.write.ios, 256u);
  EXPECT_EQ(result.fsyncs, 32u);
  ASSERT_EQ(engine.requests_.size(), 256u + 32u);
  for (size_t i = 0; i < engine.requests_.size(); ++i) {
    EXPECT_EQ(engine.requests_[i].op == IoOp::kFsync, i % 9 == 8) << i;
  }
  for (const size_t busy : engine.fsync_saw_in_flight_) EXPECT_EQ(busy, 0u);
}

TEST(RunJobTest, FsyncFailureFails) {
  ManualProbeClock clock;
  FakeEngine engine(FakeEngine::Outcome([](const IoRequest& request, size_t) -> int64_t {
    return request.op == IoOp::kFsync ? -EIO : int64_t{request.length};
  }));
  JobSpec spec = Spec(RwMode::kWrite, 1 << 20);
  spec.fsync = 4;
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), Options(clock));
  EXPECT_EQ(result.end, RunEnd::kFailed);
  ASSERT_TRUE(result.error.has_value());
  EXPECT_EQ(result.error->message, "fsync: Input/output error");
  EXPECT_EQ(result.write.ios, 4u);
}

TEST(RunJobTest, CpuUsageIsMeasured) {
  NullEngine engine;
  JobSpec spec = Spec(RwMode::kRandRead, 1 << 20);
  spec.time_based = true;
  spec.runtime = milliseconds(50);
  const ProbeResult result = MustRun(spec, engine, Target(1 << 20), RunOptions{});
  EXPECT_GT(result.cpu.user_seconds + result.cpu.system_seconds, 0.0);
  EXPECT_GE(result.elapsed, milliseconds(50));
}

TEST(SteadyProbeClockTest, SleepsUntilTheDeadline) {
  SteadyProbeClock clock;
  const uint64_t start = clock.NowNs();
  clock.SleepUntilNs(start + 2 * kMs);
  EXPECT_GE(clock.NowNs(), start + 2 * kMs);
  clock.SleepUntilNs(start);  // in the past: returns at once
}

}  // namespace
}  // namespace iowatch::probes
