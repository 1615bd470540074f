// The BPF program's decisions on plain numbers (block_io_ops.h): which
// requests it counts, in which diskstats group and at which event, and
// which kept issue times it trusts.
#include "collectors/bpf/block_io_ops.h"

#include <gtest/gtest.h>

namespace iowatch::collectors::bpf {
namespace {

// include/linux/blk_types.h
constexpr uint32_t kRead = 0;
constexpr uint32_t kWrite = 1;
constexpr uint32_t kFlush = 2;
constexpr uint32_t kDiscard = 3;
constexpr uint32_t kSecureErase = 5;
constexpr uint32_t kWriteZeroes = 9;
constexpr int kIssue = IOWATCH_EVENT_ISSUE;
constexpr int kComplete = IOWATCH_EVENT_COMPLETE;

TEST(OpGroup, AsDiskstatsGroupsThem) {
  EXPECT_EQ(iowatch_op_group(kRead, 0, 1, kComplete), IOWATCH_OP_READ);
  EXPECT_EQ(iowatch_op_group(kWrite, 0, 1, kComplete), IOWATCH_OP_WRITE);
  EXPECT_EQ(iowatch_op_group(kDiscard, 0, 1, kComplete), IOWATCH_OP_DISCARD);
  // op_stat_group: only REQ_OP_DISCARD is a discard; secure erase and
  // write-zeroes have the write bit.
  EXPECT_EQ(iowatch_op_group(kSecureErase, 0, 1, kComplete), IOWATCH_OP_WRITE);
  EXPECT_EQ(iowatch_op_group(kWriteZeroes, 0, 1, kComplete), IOWATCH_OP_WRITE);
  // The flags above the op byte do not change the group (REQ_SYNC | REQ_FUA).
  EXPECT_EQ(iowatch_op_group(kWrite | (1U << 11) | (1U << 17), 0, 1, kIssue), IOWATCH_OP_WRITE);
}

TEST(OpGroup, RequestsWithoutIoStatAreNotCounted) {
  EXPECT_EQ(iowatch_op_group(kRead, 0, 0, kIssue), -1);  // passthrough, accounting off
  EXPECT_EQ(iowatch_op_group(kWrite, 0, 0, kComplete), -1);
}

TEST(OpGroup, FlushesAreTheFlushMachinerysFlushRequests) {
  EXPECT_EQ(iowatch_op_group(kFlush, 1, 0, kIssue), IOWATCH_OP_FLUSH);
  EXPECT_EQ(iowatch_op_group(kFlush, 1, 0, kComplete), IOWATCH_OP_FLUSH);
  EXPECT_EQ(iowatch_op_group(kFlush, 0, 1, kComplete), -1);
}

// An O_SYNC direct write on a device without FUA: the flush machinery
// issues its data with RQF_FLUSH_SEQ and completes it once with the flag
// (diskstats does not count that completion), then ends it again after the
// flush with the flag cleared (counted). Its issue is a write like any other.
TEST(OpGroup, AWriteTheFlushMachineryCarriesIsAWriteAtIssueAndAtItsEnd) {
  EXPECT_EQ(iowatch_op_group(kWrite | (1U << 17), 1, 1, kIssue), IOWATCH_OP_WRITE);
  EXPECT_EQ(iowatch_op_group(kWrite | (1U << 17), 1, 1, kComplete), -1);
  EXPECT_EQ(iowatch_op_group(kWrite, 0, 1, kComplete), IOWATCH_OP_WRITE);
}

TEST(IssueIsOf, OnlyAnIssueWithinThisLifeOfTheRequest) {
  EXPECT_TRUE(iowatch_issue_is_of(1'000'500, 1'000'000, 1'002'000));
  EXPECT_TRUE(iowatch_issue_is_of(1'000'000, 1'000'000, 1'000'000));
  // A slot left by a missed completion: issued before this life began.
  EXPECT_FALSE(iowatch_issue_is_of(999'999, 1'000'000, 1'002'000));
  EXPECT_FALSE(iowatch_issue_is_of(1'003'000, 1'000'000, 1'002'000));  // after now
  EXPECT_FALSE(iowatch_issue_is_of(0, 1'000'000, 1'002'000));
  EXPECT_FALSE(iowatch_issue_is_of(1'000'500, 0, 1'002'000));
}

TEST(KernelIssue, AStampBeforeTheStartFromAnotherPlugsCachedClockIsTheStart) {
  EXPECT_EQ(iowatch_kernel_issue(1'000'500, 1'000'000, 1'002'000), 1'000'500U);
  // Issued by a task whose plug read the clock before this request started.
  EXPECT_EQ(iowatch_kernel_issue(999'000, 1'000'000, 1'002'000), 1'000'000U);
  EXPECT_TRUE(iowatch_issue_is_of(iowatch_kernel_issue(999'000, 1'000'000, 1'002'000), 1'000'000,
                                  1'002'000));
  EXPECT_EQ(iowatch_kernel_issue(0, 1'000'000, 1'002'000), 0U);
  EXPECT_EQ(iowatch_kernel_issue(1'000'500, 0, 1'002'000), 0U);
  EXPECT_EQ(iowatch_kernel_issue(1'003'000, 1'000'000, 1'002'000), 0U);  // after now
}

TEST(SizeClass, SmallUpTo16KiBMediumUpTo128KiBLargeAbove) {
  EXPECT_EQ(iowatch_size_class(512), IOWATCH_CLASS_SMALL);
  EXPECT_EQ(iowatch_size_class(4096), IOWATCH_CLASS_SMALL);
  EXPECT_EQ(iowatch_size_class(16384), IOWATCH_CLASS_SMALL);
  EXPECT_EQ(iowatch_size_class(16385), IOWATCH_CLASS_MEDIUM);
  EXPECT_EQ(iowatch_size_class(20480), IOWATCH_CLASS_MEDIUM);
  EXPECT_EQ(iowatch_size_class(131072), IOWATCH_CLASS_MEDIUM);
  EXPECT_EQ(iowatch_size_class(131073), IOWATCH_CLASS_LARGE);
  EXPECT_EQ(iowatch_size_class(262144), IOWATCH_CLASS_LARGE);
  EXPECT_EQ(iowatch_size_class(uint64_t{4} << 30), IOWATCH_CLASS_LARGE);
}

TEST(SizeClass, AFlushOf0BytesIsSmall) { EXPECT_EQ(iowatch_size_class(0), IOWATCH_CLASS_SMALL); }

TEST(StatsSectorsHold, UpTo65535Sectors) {
  EXPECT_TRUE(iowatch_stats_sectors_hold(0));
  EXPECT_TRUE(iowatch_stats_sectors_hold(1280 << 10));  // the default max_sectors_kb cap
  EXPECT_TRUE(iowatch_stats_sectors_hold((uint64_t{32} << 20) - 512));
  EXPECT_FALSE(iowatch_stats_sectors_hold(uint64_t{32} << 20));
  EXPECT_FALSE(iowatch_stats_sectors_hold(uint64_t{1} << 30));  // a discard of 1 GiB
}

}  // namespace
}  // namespace iowatch::collectors::bpf
