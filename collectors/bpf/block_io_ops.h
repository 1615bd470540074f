/* Which requests the block-layer BPF program counts, and as what: the
 * decisions of block_io.bpf.c on plain numbers, in C that clang's BPF target
 * and the C++ unit tests both compile, so that the rules diskstats follows
 * are tested where no kernel runs (tests/unit/collectors/bpf).
 *
 * diskstats (block/blk-mq.c blk_account_io_done, block/blk-flush.c) counts a
 * request with RQF_IO_STAT once, when it ends, in the group of its op
 * (block/blk.h op_stat_group: discards apart, then reads and writes by the
 * op's lowest bit: secure erase and write-zeroes are writes); the flush
 * requests the flush machinery sends (REQ_OP_FLUSH with RQF_FLUSH_SEQ) as
 * flushes. A write with PREFLUSH or FUA on a device that needs them emulated
 * is carried by the flush machinery with RQF_FLUSH_SEQ set: its data part is
 * issued and completed once with the flag (not counted then), and the
 * request is ended again, the flag cleared, after its flushes (counted
 * then, as a write).
 * Thread-safety: pure functions. */
#ifndef IOWATCH_COLLECTORS_BPF_BLOCK_IO_OPS_H_
#define IOWATCH_COLLECTORS_BPF_BLOCK_IO_OPS_H_

#include "collectors/bpf/block_io_shared.h"

/* The REQ_OP values of cmd_flags' low byte (include/linux/blk_types.h). */
#define IOWATCH_REQ_OP_MASK 0xffU
#define IOWATCH_REQ_OP_FLUSH 2U
#define IOWATCH_REQ_OP_DISCARD 3U

/* Where the program sees a request. */
enum iowatch_request_event {
  IOWATCH_EVENT_ISSUE = 0,    /* block_rq_issue: handed to the driver */
  IOWATCH_EVENT_COMPLETE = 1, /* block_io_done, or block_rq_complete's last bytes */
};

/* The diskstats group (enum iowatch_block_op) of a request with op `op`,
 * at `event`; -1 when diskstats does not count it there. */
static inline int iowatch_op_group(iowatch_u32 op, int flush_seq, int io_stat, int event) {
  op &= IOWATCH_REQ_OP_MASK;
  if (op == IOWATCH_REQ_OP_FLUSH) return flush_seq ? IOWATCH_OP_FLUSH : -1;
  if (!io_stat) return -1;
  /* The data part of a flush sequence: issued like any request, but its
   * first completion is not the one diskstats counts. */
  if (flush_seq && event == IOWATCH_EVENT_COMPLETE) return -1;
  if (op == IOWATCH_REQ_OP_DISCARD) return IOWATCH_OP_DISCARD;
  return (op & 1U) ? IOWATCH_OP_WRITE : IOWATCH_OP_READ;
}

/* Whether an issue time kept for a request belongs to the request that
 * completes now: a slot whose completion was missed (an issue program the
 * kernel skipped, say) holds an older life of the same request address, from
 * before this life's start (rq->start_time_ns); trusted, it would be hours
 * of "device latency". */
static inline int iowatch_issue_is_of(iowatch_u64 issue_ns, iowatch_u64 start_ns,
                                      iowatch_u64 now_ns) {
  return issue_ns != 0 && start_ns != 0 && start_ns <= issue_ns && issue_ns <= now_ns;
}

/* The issue time of a request the kernel stamped itself (RQF_STATS: this
 * life's rq->io_start_time_ns). Since 6.9 both stamps come from
 * blk_time_get_ns, which inside a plug returns the time cached when the plug
 * first read the clock: a request started by one task and issued by another
 * whose plug read the clock earlier carries an issue stamp before its start
 * (a few in a thousand on a loaded disk here). It cannot have been issued
 * before it started: taken as issued at its start, so that it still counts
 * in the queue (0) and device stages. 0: no usable stamp. */
static inline iowatch_u64 iowatch_kernel_issue(iowatch_u64 io_start_ns, iowatch_u64 start_ns,
                                               iowatch_u64 now_ns) {
  if (io_start_ns == 0 || start_ns == 0) return 0;
  const iowatch_u64 issue = io_start_ns < start_ns ? start_ns : io_start_ns;
  return issue <= now_ns ? issue : 0;
}

#endif /* IOWATCH_COLLECTORS_BPF_BLOCK_IO_OPS_H_ */
