#include "trace/file_trace.h"

#include <gtest/gtest.h>

namespace iowatch::trace {
namespace {

const AccessTotals& AccessOf(const FileTrace& t, Direction d, Access a) {
  return t.access[static_cast<size_t>(d)][static_cast<size_t>(a)];
}

TEST(FileTrace, SizeBucketsArePowersOfTwo) {
  EXPECT_EQ(SizeBucket(0), 0u);
  EXPECT_EQ(SizeBucket(1), 0u);
  EXPECT_EQ(SizeBucket(2), 1u);
  EXPECT_EQ(SizeBucket(4095), 11u);
  EXPECT_EQ(SizeBucket(4096), 12u);
  EXPECT_EQ(SizeBucket(102400), 16u);
  EXPECT_EQ(SizeBucketLow(16), 65536u);
  EXPECT_EQ(SizeBucket(uint64_t{1} << 40), kSizeBuckets - 1);
}

// The workload: written in 100 KB writes, read forward, read backward.
TEST(FileTrace, ForwardThenBackwardIsCountedExactly) {
  constexpr uint64_t kReq = 102400;
  FileTrace t;
  Cursor writer;
  for (int i = 0; i < 100; ++i) {
    RecordTransfer(t, writer, Direction::kWrite, kAtCursor, kReq, kReq, 10);
  }
  Cursor reader;
  for (int i = 0; i < 100; ++i)
    RecordTransfer(t, reader, Direction::kRead, kAtCursor, kReq, kReq, 5);
  for (int i = 99; i >= 0; --i) {
    RecordSeek(t, reader, static_cast<int64_t>(i * kReq), 1);
    RecordTransfer(t, reader, Direction::kRead, kAtCursor, kReq, kReq, 5);
  }
  EXPECT_EQ(t.Call(TraceCall::kWrite).calls, 100u);
  EXPECT_EQ(t.Call(TraceCall::kWrite).bytes, 100 * kReq);
  EXPECT_EQ(t.Call(TraceCall::kWrite).ns, 1000u);
  EXPECT_EQ(t.Call(TraceCall::kRead).calls, 200u);
  EXPECT_EQ(t.Call(TraceCall::kRead).min_request, kReq);
  EXPECT_EQ(t.Call(TraceCall::kRead).max_request, kReq);
  EXPECT_EQ(AccessOf(t, Direction::kWrite, Access::kSequential).requests, 100u);
  EXPECT_EQ(AccessOf(t, Direction::kRead, Access::kSequential).requests, 100u);
  // The first backward read re-reads the last block: neither after nor before it.
  EXPECT_EQ(AccessOf(t, Direction::kRead, Access::kRandom).requests, 1u);
  EXPECT_EQ(AccessOf(t, Direction::kRead, Access::kBackward).requests, 99u);
  EXPECT_EQ(PatternOf(t, Direction::kWrite), "sequential");
  EXPECT_EQ(PatternOf(t, Direction::kRead), "mixed");
  // Order of first use: write seq, read seq, read random, read backward.
  EXPECT_EQ(AccessOf(t, Direction::kWrite, Access::kSequential).first_seen, 1u);
  EXPECT_EQ(AccessOf(t, Direction::kRead, Access::kSequential).first_seen, 2u);
  EXPECT_EQ(AccessOf(t, Direction::kRead, Access::kRandom).first_seen, 3u);
  EXPECT_EQ(AccessOf(t, Direction::kRead, Access::kBackward).first_seen, 4u);
  EXPECT_EQ(t.sizes[static_cast<size_t>(Direction::kRead)][16], 200u);
  EXPECT_EQ(t.max_extent, 100 * kReq);
  EXPECT_EQ(t.Call(TraceCall::kSeek).calls, 100u);
  EXPECT_EQ(t.seek_deltas, 100u);
  // From 100 blocks to 99, then two back each time: (-1 - 99 * 2) blocks / 100.
  EXPECT_EQ(t.seek_delta_sum, -static_cast<int64_t>(kReq) * 199);
}

TEST(FileTrace, ErrorsShortTransfersAndExplicitOffsets) {
  FileTrace t;
  Cursor c;
  RecordTransfer(t, c, Direction::kRead, 4096, 4096, -1, 7);  // failed pread
  EXPECT_EQ(t.Call(TraceCall::kRead).errors, 1u);
  EXPECT_EQ(t.Call(TraceCall::kRead).requested_bytes, 0u);
  RecordTransfer(t, c, Direction::kRead, 8192, 4096, 100, 7);  // short pread, random first
  RecordTransfer(t, c, Direction::kRead, 8292, 4096, 0, 7);    // at EOF: sequential
  EXPECT_EQ(AccessOf(t, Direction::kRead, Access::kRandom).requests, 1u);
  EXPECT_EQ(AccessOf(t, Direction::kRead, Access::kSequential).requests, 1u);
  EXPECT_EQ(t.Call(TraceCall::kRead).bytes, 100u);
  EXPECT_EQ(t.Call(TraceCall::kRead).requested_bytes, 8192u);
  EXPECT_EQ(c.position, 0u);  // pread does not move the position
}

TEST(FileTrace, AppendsAreSequentialAndLeaveThePositionUnknown) {
  FileTrace t;
  Cursor c;
  c.append = true;
  RecordTransfer(t, c, Direction::kWrite, kAtCursor, 10, 10, 1);
  RecordTransfer(t, c, Direction::kWrite, kAtCursor, 10, 10, 1);
  EXPECT_EQ(AccessOf(t, Direction::kWrite, Access::kSequential).requests, 2u);
  EXPECT_FALSE(c.position_known);
  RecordSeek(t, c, 0, 1);  // from an unknown place: no delta
  EXPECT_EQ(t.seek_deltas, 0u);
  EXPECT_TRUE(c.position_known);
}

TEST(FileTrace, MergeSumsAndKeepsTheOrderOfFirstUse) {
  FileTrace writes;
  Cursor c1;
  RecordTransfer(writes, c1, Direction::kWrite, kAtCursor, 4096, 4096, 3);
  writes.opens = 1;
  FileTrace reads;
  Cursor c2;
  RecordTransfer(reads, c2, Direction::kRead, 8192, 512, 512, 2);
  RecordTransfer(reads, c2, Direction::kWrite, 0, 4096, 4096, 2);
  reads.opens = 1;
  reads.size = 9000;
  reads.Call(TraceCall::kWrite).raced = 1;
  writes.Call(TraceCall::kWrite).raced = 2;
  MergeInto(writes, reads);
  EXPECT_EQ(writes.opens, 2u);
  EXPECT_EQ(writes.Call(TraceCall::kWrite).raced, 3u);
  EXPECT_EQ(writes.size, 9000u);
  EXPECT_EQ(writes.Call(TraceCall::kWrite).calls, 2u);
  EXPECT_EQ(writes.Call(TraceCall::kRead).min_request, 512u);
  EXPECT_EQ(AccessOf(writes, Direction::kWrite, Access::kSequential).first_seen, 1u);
  EXPECT_EQ(AccessOf(writes, Direction::kRead, Access::kRandom).first_seen, 2u);
  EXPECT_EQ(AccessOf(writes, Direction::kWrite, Access::kRandom).first_seen, 3u);
  EXPECT_EQ(writes.classes_seen, 3u);
}

TEST(FileTrace, ScaleTimesConvertsTicks) {
  FileTrace t;
  RecordCall(t, TraceCall::kFsync, false, 1000);
  ScaleTimes(t, 0.5);
  EXPECT_EQ(t.Call(TraceCall::kFsync).ns, 500u);
}

}  // namespace
}  // namespace iowatch::trace
