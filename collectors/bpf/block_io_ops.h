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

/* The size class (enum iowatch_size_class) of a request of `bytes`. A
 * request of 0 bytes that reaches the driver is a flush: small, as the cost
 * of a command without data. (An fsync's data-less write, the other request
 * of 0 bytes diskstats counts, never reaches the driver: it has no device
 * stage, so no class.) */
static inline int iowatch_size_class(iowatch_u64 bytes) {
  if (bytes <= IOWATCH_CLASS_SMALL_MAX_BYTES) return IOWATCH_CLASS_SMALL;
  if (bytes <= IOWATCH_CLASS_MEDIUM_MAX_BYTES) return IOWATCH_CLASS_MEDIUM;
  return IOWATCH_CLASS_LARGE;
}

/* Whether the kernel's own record of a request's size at issue, kept for
 * its completion (rq->stats_sectors, set by blk_mq_start_request with the
 * issue stamp when the queue keeps request statistics; the completion no
 * longer has __data_len, which counts down to 0 as the bytes complete),
 * holds a request of `bytes`: it is 16 bits of sectors, short of 32 MiB. */
#define IOWATCH_STATS_SECTORS_MAX 0xffffULL
static inline int iowatch_stats_sectors_hold(iowatch_u64 bytes) {
  return (bytes >> 9) <= IOWATCH_STATS_SECTORS_MAX;
}

#endif /* IOWATCH_COLLECTORS_BPF_BLOCK_IO_OPS_H_ */
