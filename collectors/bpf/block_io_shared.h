/* What the block-layer BPF program (block_io.bpf.c) and iowatch share: the
 * maps' keys and values and the histograms' bucket layout. C, so that both
 * clang's BPF target and the C++ reader compile it; fixed-width fields only,
 * laid out without padding, so both sides agree on every byte.
 * Thread-safety: plain data. */
#ifndef IOWATCH_COLLECTORS_BPF_BLOCK_IO_SHARED_H_
#define IOWATCH_COLLECTORS_BPF_BLOCK_IO_SHARED_H_

#ifdef __bpf__
typedef unsigned int iowatch_u32;
typedef unsigned long long iowatch_u64;
#else
#include <stdint.h>
typedef uint32_t iowatch_u32;
typedef uint64_t iowatch_u64;
#endif

/* Ops as diskstats groups them (block/blk.h op_stat_group, and the flush
 * requests blk_account_io_flush counts). */
enum iowatch_block_op {
  IOWATCH_OP_READ = 0,
  IOWATCH_OP_WRITE = 1,
  IOWATCH_OP_DISCARD = 2,
  IOWATCH_OP_FLUSH = 3,
  IOWATCH_OP_COUNT = 4,
};

/* queue: the request's start (rq->start_time_ns, the kernel's own clock for
 * diskstats' ticks) to its issue to the driver; device: issue to completion;
 * total: start to completion, what diskstats' read/write ticks add up. */
enum iowatch_block_stage {
  IOWATCH_STAGE_QUEUE = 0,
  IOWATCH_STAGE_DEVICE = 1,
  IOWATCH_STAGE_TOTAL = 2,
  IOWATCH_STAGE_COUNT = 3,
};

/* Latency buckets, log-linear: slot 0 holds everything below 1,024 ns; then
 * four slots per power of two, 2^10 ns (1 µs) up to 2^35 ns (34 s); the last
 * slot everything above. Slot s ≥ 1 covers [lo, lo + 2^(p-2)) with
 * p = 10 + (s - 1) / 4 and lo = 2^p + ((s - 1) % 4) · 2^(p-2). */
#define IOWATCH_LAT_MIN_SHIFT 10
#define IOWATCH_LAT_MAX_SHIFT 35
#define IOWATCH_LAT_SUB 4
#define IOWATCH_LAT_SLOTS \
  (1 + (IOWATCH_LAT_MAX_SHIFT - IOWATCH_LAT_MIN_SHIFT) * IOWATCH_LAT_SUB + 1)

/* The coarse buckets /metrics exposes (1-2.5-5 steps, 10 µs to 10 s), kept
 * by the kernel too so that each le count is exact rather than read off
 * the fine slots, whose bounds are powers of two: slot i counts the
 * latencies at most IOWATCH_COARSE_LE_NS[i] and above the previous bound;
 * the last slot everything above 10 s. */
#define IOWATCH_COARSE_BOUNDS 19
#define IOWATCH_COARSE_SLOTS (IOWATCH_COARSE_BOUNDS + 1)
#define IOWATCH_COARSE_LE_NS_INIT                                                          \
  {                                                                                        \
    10000ULL, 25000ULL, 50000ULL, 100000ULL, 250000ULL, 500000ULL, 1000000ULL, 2500000ULL, \
        5000000ULL, 10000000ULL, 25000000ULL, 50000000ULL, 100000000ULL, 250000000ULL,     \
        500000000ULL, 1000000000ULL, 2500000000ULL, 5000000000ULL, 10000000000ULL          \
  }

/* Request sizes: slot 0 up to 512 B, slot i (2^(8+i), 2^(9+i)] bytes, up to
 * 16 MiB (slot 15); slot 16 above. */
#define IOWATCH_SIZE_MIN_SHIFT 9
#define IOWATCH_SIZE_SLOTS 17

struct iowatch_dev_op_key {
  iowatch_u32 dev; /* the whole disk: major << 20 | minor, the kernel's dev_t */
  iowatch_u32 op;  /* enum iowatch_block_op */
};

struct iowatch_latency_hist {
  iowatch_u64 count;
  iowatch_u64 sum_ns;
  iowatch_u64 slots[IOWATCH_LAT_SLOTS];
  iowatch_u64 coarse[IOWATCH_COARSE_SLOTS];
};

/* Counted when a request ends, by its size and start at issue (kernels
 * before block_io_done, and queues that keep no issue time: when it is
 * handed to the driver); a request ended without reaching the driver, an
 * fsync's data-less write, counts as 0 bytes. */
struct iowatch_request_stats {
  iowatch_u64 bytes;
  iowatch_u64 sequential; /* started where the device's previous request of the op ended */
  iowatch_u64 random;
  iowatch_u64 aligned; /* start and length multiples of the device's alignment unit */
  iowatch_u64 unaligned;
  iowatch_u64 size_slots[IOWATCH_SIZE_SLOTS];
};

/* Request size classes (block_io_ops.h iowatch_size_class): a disk's
 * latency moves with the mix of sizes it serves, so the device stage is
 * also kept per class, for judging each class against itself. */
enum iowatch_size_class {
  IOWATCH_CLASS_SMALL = 0,  /* up to 16 KiB (0 bytes included: a flush) */
  IOWATCH_CLASS_MEDIUM = 1, /* up to 128 KiB */
  IOWATCH_CLASS_LARGE = 2,  /* above */
  IOWATCH_CLASS_COUNT = 3,
};
#define IOWATCH_CLASS_SMALL_MAX_BYTES (16ULL << 10)
#define IOWATCH_CLASS_MEDIUM_MAX_BYTES (128ULL << 10)

/* The device stage of one size class: counted with the stage's histogram,
 * so that the classes' counts add up to the stage's count. `bytes`: the
 * requests' sizes when they were issued. */
struct iowatch_class_stats {
  iowatch_u64 count;
  iowatch_u64 sum_ns;
  iowatch_u64 bytes;
};

/* All a disk and op counted: the map's one value per CPU. */
struct iowatch_disk_op_stats {
  struct iowatch_latency_hist stage[IOWATCH_STAGE_COUNT]; /* enum iowatch_block_stage */
  struct iowatch_request_stats requests;
  struct iowatch_class_stats device_class[IOWATCH_CLASS_COUNT]; /* enum iowatch_size_class */
};

/* What the program keeps per whole disk, one entry for every CPU: where
 * the disk's last request of each op ended (in sectors, plus 1: 0 is "none
 * yet"), so that a stream stays sequential when its thread moves to another
 * CPU; and the disk's alignment unit in bytes, set by iowatch from sysfs
 * (0: alignment not counted). One lookup serves both. */
struct iowatch_disk_state {
  iowatch_u64 next_sector[IOWATCH_OP_COUNT];
  iowatch_u32 align_bytes;
  iowatch_u32 unused;
};

struct iowatch_cgroup_key {
  iowatch_u64 cgroup_id; /* the blkcg's cgroup: kernfs node id, the directory's inode */
  iowatch_u32 dev;
  iowatch_u32 op;
};

struct iowatch_cgroup_io {
  iowatch_u64 bytes;
  iowatch_u64 requests;
};

/* A request the block layer ended with an error where the kernel logs it
 * (block_rq_error: "<kind> error, dev <disk>, sector … op 0x…:(<OP>)"): its
 * whole disk, its REQ_OP (cmd_flags' low byte; iowatch names it from the
 * kernel's BTF enum req_op) and its blk_status_t (the kind). The value: a
 * per-CPU count. */
struct iowatch_error_key {
  iowatch_u32 dev;
  iowatch_u32 req_op;
  iowatch_u32 status;
};

/* Per CPU, what the program could not record (a full map). */
enum iowatch_block_loss {
  IOWATCH_LOST_ISSUE =
      0, /* the in-flight map was full: a request without queue and device stages */
  IOWATCH_LOST_SERIES = 1, /* a histogram, counter or error map was full */
  IOWATCH_LOST_CGROUP = 2, /* the cgroup map was full */
  /* Flushes whose end the kernel does not trace at block_io_done (6.5+: a
   * queue without request statistics or a scheduler): counted at issue
   * here, not in the histograms. */
  IOWATCH_LOST_FLUSH = 3,
  IOWATCH_LOST_COUNT = 4,
};

#endif /* IOWATCH_COLLECTORS_BPF_BLOCK_IO_SHARED_H_ */
