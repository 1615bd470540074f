// SPDX-License-Identifier: GPL-2.0
/* The block-layer collector's kernel half: every request the block layer
 * completes, aggregated in per-CPU maps keyed by (disk, op), read by
 * iowatch once per sample (collectors/bpf/block_io_reader.h). Nothing is
 * sent per event.
 *
 * BTF-typed tracepoints (tp_btf: no tracefs mount, typed arguments):
 *   block_rq_issue     the request goes to the driver: its issue time, size
 *                      and whether it starts where the disk's previous
 *                      request of its op ended, kept by request address until
 *   block_io_done      the kernel accounts its completion in diskstats (6.5
 *                      and later; blk_account_io_done, which reads the clock
 *                      right after it: the total stage is diskstats' own
 *                      time to the microsecond), or, on older kernels,
 *   block_rq_complete  the last of its bytes completes (a few microseconds
 *                      before diskstats' clock reading on the loop device
 *                      here): three latency stages from the kernel's own
 *                      start time (rq->start_time_ns, diskstats' clock),
 *                      size, pattern, alignment and the cgroup's bytes.
 * iowatch loads one of the last two (BlockIoProgram::Load).
 * block_rq_insert is not used: with blk-mq's direct issue most requests are
 * never inserted, so the queue stage runs from the request's start (what
 * diskstats' ticks count from) to its issue, and queue + device = total.
 *
 * Counted as diskstats counts (block/blk-mq.c blk_account_io_done): only
 * requests with RQF_IO_STAT and not part of a flush sequence, once, when
 * the last of their bytes completes; flushes as blk_account_io_flush counts
 * them: the flush request of a flush sequence. GPL: the tracepoints'
 * helpers need it. */
/* The kernel's types first: libbpf's headers use them. */
// clang-format off
#include "collectors/bpf/kernel_types.bpf.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "collectors/bpf/block_io_shared.h"
// clang-format on

char LICENSE[] SEC("license") = "GPL";

/* Slots for requests in flight at once on the whole host (a power of two):
 * 64 devices at queue depth 1,024 fill it; far fewer leave most probes
 * finding a free slot at once. */
#define MAX_IN_FLIGHT 65536
#define IN_FLIGHT_PROBES 4
/* Disks × ops: 1,024 disks. Allocated per key (BPF_F_NO_PREALLOC): a
 * per-CPU value exists for the pairs seen only. */
#define MAX_DISK_OP_SERIES (1024 * IOWATCH_OP_COUNT)
#define MAX_REQUEST_SERIES MAX_DISK_OP_SERIES
#define MAX_CGROUP_SERIES 16384
#define MAX_ALIGN_DEVICES 1024

/* The REQ_OP bits of cmd_flags (include/linux/blk_types.h). */
#define REQ_OP_MASK 0xff
#define REQ_OP_WRITE 1
#define REQ_OP_FLUSH 2
#define REQ_OP_DISCARD 3
#define REQ_OP_SECURE_ERASE 5
/* The values of RQF_IO_STAT and RQF_FLUSH_SEQ before they became enum bits. */
#define OLD_RQF_FLUSH_SEQ (1U << 4)
#define OLD_RQF_IO_STAT (1U << 13)
#define MINORBITS 20

/* What completion needs of the request as it was issued: by then its bios
 * are gone (rq->bio is NULL at block_io_done) and __sector has moved past
 * the bytes completed. */
struct in_flight {
  __u64 rq; /* the request's address; 0: a free slot */
  __u64 issue_ns;
  __u64 sector;     /* where it started */
  __u64 cgroup_id;  /* its blkcg's cgroup, 0 when none */
  __u32 bytes;      /* the request's size at issue */
  __u32 sequential; /* 1 when it started where the previous one ended */
};

/* Requests in flight, in an array probed from a hash of their address: a
 * slot is claimed with one compare-and-swap (BPF atomics: kernel 5.12) and
 * freed with one exchange, where a hash map's update and delete took a
 * bucket lock and a free list each. IN_FLIGHT_PROBES slots are tried; a
 * request finding all taken loses its stages (counted in `lost`). */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, MAX_IN_FLIGHT);
  __type(key, __u32);
  __type(value, struct in_flight);
} in_flight SEC(".maps");

/* Where each disk's last issued request of each op ended, in sectors. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_REQUEST_SERIES);
  __type(key, struct iowatch_dev_op_key);
  __type(value, __u64);
} next_sector SEC(".maps");

/* Everything counted per disk and op, in one value: a completion looks up
 * one entry, not one per stage and one for the sizes. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
  __uint(max_entries, MAX_DISK_OP_SERIES);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct iowatch_dev_op_key);
  __type(value, struct iowatch_disk_op_stats);
} disk_ops SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
  __uint(max_entries, MAX_CGROUP_SERIES);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct iowatch_cgroup_key);
  __type(value, struct iowatch_cgroup_io);
} cgroup_io SEC(".maps");

/* Each disk's alignment unit in bytes, set by iowatch from sysfs
 * (optimal_io_size, else physical_block_size); absent: not counted. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_ALIGN_DEVICES);
  __type(key, __u32);
  __type(value, __u32);
} align_bytes SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, IOWATCH_LOST_COUNT);
  __type(key, __u32);
  __type(value, __u64);
} lost SEC(".maps");

static __always_inline void count_loss(__u32 what) {
  __u64* n = bpf_map_lookup_elem(&lost, &what);
  if (n) *n += 1;
}

static __always_inline __u32 rq_flag(int enum_bit, __u32 old_value) {
  return enum_bit >= 0 ? 1U << enum_bit : old_value;
}

static __always_inline __u32 rq_flag_io_stat(void) {
  if (bpf_core_enum_value_exists(enum rqf_flags, __RQF_IO_STAT))
    return rq_flag(bpf_core_enum_value(enum rqf_flags, __RQF_IO_STAT), OLD_RQF_IO_STAT);
  return OLD_RQF_IO_STAT;
}

static __always_inline __u32 rq_flag_flush_seq(void) {
  if (bpf_core_enum_value_exists(enum rqf_flags, __RQF_FLUSH_SEQ))
    return rq_flag(bpf_core_enum_value(enum rqf_flags, __RQF_FLUSH_SEQ), OLD_RQF_FLUSH_SEQ);
  return OLD_RQF_FLUSH_SEQ;
}

/* The op group diskstats counts the request in; -1: not counted. */
static __always_inline int op_of(struct request* rq) {
  const __u32 rq_flags = rq->rq_flags;
  const __u32 op = rq->cmd_flags & REQ_OP_MASK;
  if (rq_flags & rq_flag_flush_seq()) return op == REQ_OP_FLUSH ? IOWATCH_OP_FLUSH : -1;
  if (!(rq_flags & rq_flag_io_stat())) return -1;
  if (op == REQ_OP_DISCARD || op == REQ_OP_SECURE_ERASE) return IOWATCH_OP_DISCARD;
  return (op & 1) ? IOWATCH_OP_WRITE : IOWATCH_OP_READ;
}

static __always_inline __u32 disk_of(struct request* rq) {
  struct gendisk* disk = rq->q->disk;
  if (!disk) return 0;
  const __u32 major = disk->major;
  const __u32 minor = disk->first_minor;
  return major << MINORBITS | minor;
}

/* The index of the most significant set bit of v > 0, without loops. */
static __always_inline __u32 msb64(__u64 v) {
  __u32 r = 0;
  if (v >> 32) {
    v >>= 32;
    r += 32;
  }
  if (v >> 16) {
    v >>= 16;
    r += 16;
  }
  if (v >> 8) {
    v >>= 8;
    r += 8;
  }
  if (v >> 4) {
    v >>= 4;
    r += 4;
  }
  if (v >> 2) {
    v >>= 2;
    r += 2;
  }
  if (v >> 1) r += 1;
  return r;
}

static __always_inline __u32 latency_slot(__u64 ns) {
  if (ns < (1ULL << IOWATCH_LAT_MIN_SHIFT)) return 0;
  const __u32 p = msb64(ns);
  if (p >= IOWATCH_LAT_MAX_SHIFT) return IOWATCH_LAT_SLOTS - 1;
  const __u32 sub = (ns >> (p - 2)) & (IOWATCH_LAT_SUB - 1);
  return 1 + (p - IOWATCH_LAT_MIN_SHIFT) * IOWATCH_LAT_SUB + sub;
}

static const __u64 coarse_le_ns[IOWATCH_COARSE_BOUNDS] = IOWATCH_COARSE_LE_NS_INIT;

/* The first coarse bound at or above ns (IOWATCH_COARSE_BOUNDS: above all),
 * by binary search: five comparisons. */
static __always_inline __u32 coarse_slot(__u64 ns) {
  __u32 low = 0;
  __u32 high = IOWATCH_COARSE_BOUNDS;
#pragma unroll
  for (int i = 0; i < 5; ++i) {
    if (low < high) {
      const __u32 mid = (low + high) / 2;
      if (mid < IOWATCH_COARSE_BOUNDS && ns <= coarse_le_ns[mid])
        high = mid;
      else
        low = mid + 1;
    }
  }
  return low;
}

static __always_inline __u32 size_slot(__u64 bytes) {
  if (bytes <= (1ULL << IOWATCH_SIZE_MIN_SHIFT)) return 0;
  const __u32 p = msb64(bytes - 1) + 1; /* ceil(log2(bytes)) */
  const __u32 slot = p - IOWATCH_SIZE_MIN_SHIFT;
  return slot < IOWATCH_SIZE_SLOTS ? slot : IOWATCH_SIZE_SLOTS - 1;
}

/* The map's value for key, created zeroed when absent; null when full. */
static __always_inline void* value_of(void* map, const void* key, const void* zero) {
  void* value = bpf_map_lookup_elem(map, key);
  if (value) return value;
  if (bpf_map_update_elem(map, key, zero, BPF_NOEXIST) != 0 && bpf_map_lookup_elem(map, key) == 0) {
    count_loss(IOWATCH_LOST_SERIES);
    return 0;
  }
  return bpf_map_lookup_elem(map, key);
}

static const struct iowatch_disk_op_stats zero_stats;
static const struct iowatch_cgroup_io zero_cgroup_io;

static __always_inline void add_latency(struct iowatch_latency_hist* h, __u64 ns) {
  h->count += 1;
  h->sum_ns += ns;
  const __u32 slot = latency_slot(ns);
  if (slot < IOWATCH_LAT_SLOTS) h->slots[slot] += 1;
  const __u32 coarse = coarse_slot(ns);
  if (coarse < IOWATCH_COARSE_SLOTS) h->coarse[coarse] += 1;
}

/* A scalar copy of a pointer: the verifier refuses arithmetic on the
 * pointer itself, while what a map value holds is a plain number. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} scratch SEC(".maps");

static __always_inline __u64 address_of(struct request* rq) {
  const __u32 zero = 0;
  volatile __u64* cell = bpf_map_lookup_elem(&scratch, &zero);
  if (!cell) return 0;
  *cell = (__u64)rq;
  return *cell; /* volatile: a load the compiler may not replace by rq */
}

/* The first of a request's probe slots (Fibonacci hashing of its address). */
static __always_inline __u32 in_flight_slot(__u64 rq) {
  return (__u32)(((rq >> 6) * 0x9E3779B97F4A7C15ULL) >> 48);
}

/* Where the request's issue is kept: its own slot (a requeued request issued
 * again) or a free one, claimed; null when every probe is taken. */
static __always_inline struct in_flight* claim_slot(__u64 rq) {
  const __u32 first = in_flight_slot(rq);
#pragma unroll
  for (__u32 i = 0; i < IN_FLIGHT_PROBES; ++i) {
    const __u32 slot = (first + i) & (MAX_IN_FLIGHT - 1);
    struct in_flight* f = bpf_map_lookup_elem(&in_flight, &slot);
    if (f && f->rq == rq) return f;
  }
#pragma unroll
  for (__u32 i = 0; i < IN_FLIGHT_PROBES; ++i) {
    const __u32 slot = (first + i) & (MAX_IN_FLIGHT - 1);
    struct in_flight* f = bpf_map_lookup_elem(&in_flight, &slot);
    if (f && __sync_val_compare_and_swap(&f->rq, 0, rq) == 0) return f;
  }
  return 0;
}

/* The request's issue, its slot freed; 0 when none was kept. */
static __always_inline int release_slot(__u64 rq, struct in_flight* out) {
  const __u32 first = in_flight_slot(rq);
#pragma unroll
  for (__u32 i = 0; i < IN_FLIGHT_PROBES; ++i) {
    const __u32 slot = (first + i) & (MAX_IN_FLIGHT - 1);
    struct in_flight* f = bpf_map_lookup_elem(&in_flight, &slot);
    if (f && f->rq == rq) {
      *out = *f;
      /* Read before freed: the next claim may come from any CPU. */
      __sync_lock_test_and_set(&f->rq, 0);
      return 1;
    }
  }
  return 0;
}

/* The cgroup of the blkcg the block layer charged the request's first bio to. */
static __always_inline __u64 cgroup_of(struct request* rq) {
  if (!bpf_core_field_exists(rq->bio->bi_blkg)) return 0; /* no CONFIG_BLK_CGROUP */
  return rq->bio->bi_blkg->blkcg->css.cgroup->kn->id;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(on_issue, struct request* rq) {
  const int op = op_of(rq);
  if (op < 0) return 0;
  const __u32 bytes = rq->__data_len;
  const __u64 sector = rq->__sector;
  struct in_flight f = {.issue_ns = bpf_ktime_get_ns(), .sector = sector, .bytes = bytes};
  if (op != IOWATCH_OP_FLUSH) f.cgroup_id = cgroup_of(rq);
  struct iowatch_dev_op_key key = {disk_of(rq), (__u32)op};
  const __u64 end = sector + (bytes >> 9);
  __u64* next = bpf_map_lookup_elem(&next_sector, &key);
  if (next) {
    f.sequential = *next == sector;
    *next = end;
  } else {
    bpf_map_update_elem(&next_sector, &key, &end, BPF_ANY);
  }
  const __u64 id = address_of(rq);
  struct in_flight* slot = id ? claim_slot(id) : 0;
  if (!slot) {
    count_loss(IOWATCH_LOST_ISSUE);
    return 0;
  }
  slot->issue_ns = f.issue_ns;
  slot->sector = f.sector;
  slot->cgroup_id = f.cgroup_id;
  slot->bytes = f.bytes;
  slot->sequential = f.sequential;
  return 0;
}

static __always_inline void count_request(struct iowatch_request_stats* s, __u32 dev,
                                          const struct in_flight* f) {
  const __u64 bytes = f->bytes;
  s->bytes += bytes;
  if (f->sequential)
    s->sequential += 1;
  else
    s->random += 1;
  const __u32 slot = size_slot(bytes);
  if (slot < IOWATCH_SIZE_SLOTS) s->size_slots[slot] += 1;
  __u32* unit = bpf_map_lookup_elem(&align_bytes, &dev);
  if (unit && *unit) {
    const __u64 start = f->sector << 9;
    if (start % *unit == 0 && bytes % *unit == 0)
      s->aligned += 1;
    else
      s->unaligned += 1;
  }
}

static __always_inline void count_cgroup(__u32 dev, int op, const struct in_flight* f) {
  if (f->cgroup_id == 0) return;
  struct iowatch_cgroup_key key = {f->cgroup_id, dev, (__u32)op};
  struct iowatch_cgroup_io* io = bpf_map_lookup_elem(&cgroup_io, &key);
  if (!io) {
    if (bpf_map_update_elem(&cgroup_io, &key, &zero_cgroup_io, BPF_NOEXIST) != 0 &&
        bpf_map_lookup_elem(&cgroup_io, &key) == 0) {
      count_loss(IOWATCH_LOST_CGROUP);
      return;
    }
    io = bpf_map_lookup_elem(&cgroup_io, &key);
    if (!io) return;
  }
  io->bytes += f->bytes;
  io->requests += 1;
}

/* The request's completion as diskstats counts it, at `now`. */
static __always_inline void account(struct request* rq, int op, __u64 now) {
  const __u32 dev = disk_of(rq);
  const __u64 start = rq->start_time_ns;
  struct in_flight issued = {};
  const __u64 id = address_of(rq);
  const int kept = id && release_slot(id, &issued);
  struct iowatch_dev_op_key key = {dev, (__u32)op};
  struct iowatch_disk_op_stats* v = value_of(&disk_ops, &key, &zero_stats);
  if (!v) return;
  const __u64 issue = issued.issue_ns;
  if (start != 0 && start <= now) add_latency(&v->stage[IOWATCH_STAGE_TOTAL], now - start);
  if (issue != 0 && issue <= now) add_latency(&v->stage[IOWATCH_STAGE_DEVICE], now - issue);
  if (issue != 0 && start != 0 && start <= issue)
    add_latency(&v->stage[IOWATCH_STAGE_QUEUE], issue - start);
  if (!kept) return; /* issued before the program was loaded, or lost: no size */
  count_request(&v->requests, dev, &issued);
  count_cgroup(dev, op, &issued);
}

SEC("tp_btf/block_io_done")
int BPF_PROG(on_done, struct request* rq) {
  /* The clock first: diskstats read it just before this tracepoint, and
   * every nanosecond spent here would add to the total stage. */
  const __u64 now = bpf_ktime_get_ns();
  const int op = op_of(rq);
  if (op >= 0) account(rq, op, now);
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(on_complete, struct request* rq, int error, unsigned int nr_bytes) {
  const __u64 now = bpf_ktime_get_ns();
  const int op = op_of(rq);
  if (op < 0) return 0;
  /* A partial completion leaves the request in flight; diskstats counts
   * it when its last bytes complete. */
  if (nr_bytes < rq->__data_len) return 0;
  account(rq, op, now);
  return 0;
}
