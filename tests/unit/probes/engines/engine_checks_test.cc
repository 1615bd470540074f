// The checks every engine needs run once, in ProbeEngine's public steps
// (engine.cc, fio's td_io_queue): each engine, made as the runner makes it,
// refuses the same misuses with the same words, "<engine> engine: …": a
// step before Open, a depth of 0 (or beyond io_uring's ring), no
// descriptor, a full queue (queued or in flight, until reaped) and a
// request longer than its buffer. On a real file under /var/tmp; an engine
// the kernel refuses is skipped, saying so.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "probes/engines/engine.h"

namespace iowatch::probes {
namespace {

constexpr size_t kCheckBlock = 4096;

class EngineChecksTest : public ::testing::TestWithParam<EngineKind> {
 protected:
  void SetUp() override {
    char pattern[] = "/var/tmp/iowatch-engine-checks-XXXXXX";
    fd_ = mkstemp(pattern);
    ASSERT_GE(fd_, 0);
    path_ = pattern;
    ASSERT_EQ(ftruncate(fd_, 16 * kCheckBlock), 0);
    buffer_.assign(kCheckBlock, std::byte{'x'});
    spans_[0] = buffer_;
    engine_ = MakeEngine(GetParam());
  }
  void TearDown() override {
    engine_.reset();
    if (fd_ >= 0) close(fd_);
    if (!path_.empty()) unlink(path_.c_str());
  }

  EngineTarget Target() const { return {fd_, spans_}; }
  std::string Words(std::string_view what) const {
    return std::string(engine_->Name()) + " engine: " + std::string(what);
  }
  int fd_ = -1;
  std::string path_;
  std::vector<std::byte> buffer_;
  std::array<std::span<std::byte>, 1> spans_;
  std::unique_ptr<ProbeEngine> engine_;
};

TEST_P(EngineChecksTest, EveryStepBeforeOpenIsRefusedAsNotOpen) {
  const IoRequest read{IoOp::kRead, 0, kCheckBlock, 0, 1};
  auto queued = engine_->Queue(read);
  ASSERT_FALSE(queued.has_value());
  EXPECT_EQ(queued.error().message, Words("not open"));
  auto submitted = engine_->Submit();
  ASSERT_FALSE(submitted.has_value());
  EXPECT_EQ(submitted.error().message, Words("not open"));
  std::array<IoCompletion, 1> out;
  auto reaped = engine_->Reap(1, out, std::chrono::milliseconds(1));
  ASSERT_FALSE(reaped.has_value());
  EXPECT_EQ(reaped.error().message, Words("not open"));
}

TEST_P(EngineChecksTest, ADepthOfZeroOrNoDescriptorIsRefusedAtOpen) {
  auto zero = engine_->Open(Target(), 0);
  ASSERT_FALSE(zero.has_value());
  EXPECT_EQ(zero.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(zero.error().message, Words("depth must be > 0"));
  auto no_fd = engine_->Open({-1, spans_}, 1);
  if (GetParam() == EngineKind::kNull) {
    EXPECT_TRUE(no_fd.has_value()) << "the null engine moves no data";
  } else {
    ASSERT_FALSE(no_fd.has_value());
    EXPECT_EQ(no_fd.error().message, Words("no descriptor"));
  }
  if (GetParam() == EngineKind::kIoUring) {
    auto deep = engine_->Open(Target(), 32769);
    ASSERT_FALSE(deep.has_value());
    EXPECT_EQ(deep.error().message, Words("depth must be 1..32768"));
  }
}

TEST_P(EngineChecksTest, TheQueueHoldsDepthUntilReapedAndABufferBoundsItsRequest) {
  auto opened = engine_->Open(Target(), 2);
  if (!opened && opened.error().code == ErrorCode::kUnsupported) {
    GTEST_SKIP() << "the kernel refuses the engine here: " << opened.error().ToString();
  }
  ASSERT_TRUE(opened.has_value()) << opened.error().ToString();
  const IoRequest read{IoOp::kRead, 0, kCheckBlock, 0, 1};
  ASSERT_TRUE(engine_->Queue(read).has_value());
  ASSERT_TRUE(engine_->Queue({IoOp::kRead, kCheckBlock, kCheckBlock, 0, 2}).has_value());
  auto full = engine_->Queue({IoOp::kRead, 2 * kCheckBlock, kCheckBlock, 0, 3});
  ASSERT_FALSE(full.has_value());
  EXPECT_EQ(full.error().message, Words("queue is full"));
  auto started = engine_->Submit();
  ASSERT_TRUE(started.has_value()) << started.error().ToString();
  EXPECT_EQ(*started, 2u);
  // Submitted is not reaped: still full.
  EXPECT_FALSE(engine_->Queue({IoOp::kRead, 2 * kCheckBlock, kCheckBlock, 0, 3}).has_value());
  std::array<IoCompletion, 2> out;
  size_t reaped = 0;
  for (int tries = 0; reaped < 2 && tries < 100; ++tries) {
    auto got = engine_->Reap(2 - reaped, std::span(out).subspan(reaped), std::chrono::seconds(1));
    ASSERT_TRUE(got.has_value()) << got.error().ToString();
    reaped += *got;
  }
  ASSERT_EQ(reaped, 2u);
  EXPECT_EQ(out[0].result, static_cast<int64_t>(kCheckBlock));
  auto too_long = engine_->Queue({IoOp::kRead, 0, 2 * kCheckBlock, 0, 4});
  auto no_buffer = engine_->Queue({IoOp::kRead, 0, kCheckBlock, 1, 5});
  if (GetParam() == EngineKind::kNull) {
    EXPECT_TRUE(too_long.has_value());  // nothing is read into it
  } else {
    ASSERT_FALSE(too_long.has_value());
    EXPECT_EQ(too_long.error().message, Words("request does not fit its buffer"));
    ASSERT_FALSE(no_buffer.has_value());
    EXPECT_EQ(no_buffer.error().message, Words("request does not fit its buffer"));
    // Reaped, the queue has room again.
    EXPECT_TRUE(engine_->Queue(read).has_value());
  }
  engine_->Close();
  auto closed = engine_->Queue(read);
  ASSERT_FALSE(closed.has_value());
  EXPECT_EQ(closed.error().message, Words("not open"));
}

INSTANTIATE_TEST_SUITE_P(EachEngine, EngineChecksTest,
                         ::testing::Values(EngineKind::kIoUring, EngineKind::kLibaio,
                                           EngineKind::kPsync, EngineKind::kNull),
                         [](const auto& param) { return std::string(ToString(param.param)); });

}  // namespace
}  // namespace iowatch::probes
