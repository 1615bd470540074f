// SPDX-License-Identifier: GPL-2.0
/* The block-layer BPF program's kernel half: every request the block layer
 * serves, aggregated in per-CPU maps keyed by (disk, op), read by iowatch
 * once per sample (collectors/bpf/block_io_program.h). Nothing is sent per
 * event, and nothing is carried from a request's issue to its completion
 * where the kernel keeps it in the request itself.
 *
 * BTF-typed tracepoints (tp_btf: no tracefs mount, typed arguments):
 *   block_rq_issue     the request goes to the driver: its cgroup's bytes
 *                      are counted here (the bios are gone at its end),
 *                      once per request (a request issued again after a
 *                      requeue is not counted again); then
 *   block_io_done      the kernel accounts its completion in diskstats (6.5
 *                      and later; blk_account_io_done, which reads the clock
 *                      right before it: the total stage is diskstats' own
 *                      time to the microsecond). Its size and start as
 *                      issued (rq->stats_sectors, and rq->__sector, which
 *                      only a partial completion moves), pattern (whether
 *                      it starts where the disk's previous request of its op
 *                      ended) and alignment are counted here too, in the
 *                      value the stages are counted in; or, on older kernels
 *                      (where these are counted at the issue),
 *   block_rq_complete  the last of its bytes completes (a few microseconds
 *                      before diskstats' clock reading on the loop device
 *                      here): three latency stages from the kernel's own
 *                      start time (rq->start_time_ns, diskstats' clock) and
 *                      issue time (rq->io_start_time_ns, kept by every queue
 *                      with request statistics on, which writeback
 *                      throttling turns on for every multi-queue disk of a
 *                      kernel built with it), and the device stage per
 *                      size class (block_io_ops.h iowatch_size_class) by
 *                      the size the request was issued with, which the
 *                      same queues keep in it (rq->stats_sectors).
 * iowatch loads one of the last two (BlockIoProgram::Load). And
 *   block_rq_error     a request ended with an error, fired where the kernel
 *                      logs it (not for passthrough or RQF_QUIET requests,
 *                      nor on a dead disk), rate limit aside: counted by disk,
 *                      REQ_OP and status. Nothing runs for a request that
 *                      succeeds. Only on a queue
 * that keeps no issue time does the issue program record one, and the
 * request's size, in a slot keyed by the request's address that the
 * completion frees; elsewhere only the size of a request too large for
 * rq->stats_sectors' 16 bits (32 MiB and more: discards, write-zeroes).
 * block_rq_insert is not used: with blk-mq's direct issue most requests are
 * never inserted, so the queue stage runs from the request's start (what
 * diskstats' ticks count from) to its issue, and queue + device = total.
 *
 * Counted as diskstats counts (block_io_ops.h): requests with RQF_IO_STAT,
 * once, when they end; flushes as the flush requests the flush machinery
 * sends. A write the flush machinery carries (PREFLUSH/FUA on a device that
 * emulates them) is issued with RQF_FLUSH_SEQ and counted like any write
 * issued; it ends after its flushes, and its device stage with them. A
 * request that never reached the driver (an fsync's data-less write, which
 * reaches the device as its flush) has a total stage only and counts as a
 * request of 0 bytes, as diskstats counts it. GPL: the tracepoints' helpers
 * need it. */
/* The kernel's types first: libbpf's headers use them. */
// clang-format off
#include "collectors/bpf/kernel_types.bpf.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "collectors/bpf/block_io_ops.h"
#include "collectors/bpf/block_io_shared.h"
// clang-format on

char LICENSE[] SEC("license") = "GPL";

/* Slots for requests in flight at once on queues that keep no issue time
 * (a power of two): 64 such devices at queue depth 1,024 fill it. */
#define MAX_IN_FLIGHT 65536
#define IN_FLIGHT_PROBES 4
/* Disks × ops: 1,024 disks. Allocated per key (BPF_F_NO_PREALLOC): a
 * per-CPU value exists for the pairs seen only; iowatch deletes the entries
 * of disks that are gone (BlockIoProgram::ForgetDisks). */
#define MAX_DISK_OP_SERIES (1024 * IOWATCH_OP_COUNT)
#define MAX_CGROUP_SERIES 16384
#define MAX_DISKS 1024
/* Disks × ops × statuses that ever failed a request. */
#define MAX_ERROR_SERIES 4096

/* The values of the request flags before they became enum bits (5.x). */
#define OLD_RQF_FLUSH_SEQ (1U << 4)
#define OLD_RQF_IO_STAT (1U << 13)
#define MINORBITS 20

/* Set by iowatch before loading: the bit of QUEUE_FLAG_STATS in
 * request_queue.queue_flags, read from the kernel's BTF (the flags are an
 * anonymous enum, which CO-RE cannot relocate); 64 when not found, and then
 * every request's issue time is kept in a slot. */
const volatile __u32 queue_stats_bit = 64;
/* Set by iowatch: 1 when on_done is the completion program (block_io_done,
 * which fires only for requests the kernel timestamps at their end). Then a
 * request the kernel stamped at issue is counted whole at its end (size,
 * pattern, alignment), and the issue program does nothing for it but what
 * only the issue sees: its cgroup, and the size of one too large for the
 * kernel's record. */
const volatile __u8 completion_at_done = 0;
/* Set by iowatch, at load and whenever its config changes (a global the
 * program reads each time, not a constant: switching them keeps the
 * counts): 0 when nothing reads the cgroups' bytes (cgroups off, or
 * iowatch biolatency), and no cgroup is looked up; 0 when nothing reads the
 * queue stage (serve without collectors.bpf.queue_stage), and its
 * histogram is not kept. */
volatile __u8 count_cgroups = 1;
volatile __u8 count_queue_stage = 1;

/* A request's issue on a queue that keeps no issue time, or the size of a
 * request too large for the kernel's record of it (iowatch_stats_sectors_hold)
 * on a queue that does. */
struct in_flight {
  __u64 rq;       /* the request's address; 0: a free slot */
  __u64 start_ns; /* the life of the request it was issued in (rq->start_time_ns) */
  __u64 issue_ns; /* 0: a size kept for a queue that stamps the issue itself */
  __u64 bytes;    /* the request's size at issue */
};

/* Requests whose size only a slot keeps (over 32 MiB: discards and
 * write-zeroes, mostly), all disks together: while none is, completions
 * on queues that stamp the issue look up no slot. One that never completes
 * (a missed completion) costs those completions the lookup; it counts no
 * wrong figure. */
__u64 sized_in_flight = 0;

/* Requests in flight, in an array probed from a hash of their address: a
 * slot is claimed with one compare-and-swap (BPF atomics: kernel 5.12) and
 * freed with one exchange. IN_FLIGHT_PROBES slots are tried; a request
 * finding all taken loses its queue and device stages (counted in `lost`). */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, MAX_IN_FLIGHT);
  __type(key, __u32);
  __type(value, struct in_flight);
} in_flight SEC(".maps");

/* Per whole disk: where its last request of each op ended, and its
 * alignment unit (block_io_shared.h iowatch_disk_state). */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, MAX_DISKS);
  __type(key, __u32);
  __type(value, struct iowatch_disk_state);
} disks SEC(".maps");

/* Everything counted per disk and op, in one value: each program looks up
 * one entry. */
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

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
  __uint(max_entries, MAX_ERROR_SERIES);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, struct iowatch_error_key);
  __type(value, __u64);
} block_errors SEC(".maps");

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

/* RQF_STATS: the kernel stamped the request's issue (io_start_time_ns).
 * 0 where the flags are not an enum yet: the issue time is then ours. */
static __always_inline __u32 rq_flag_stats(void) {
  if (bpf_core_enum_value_exists(enum rqf_flags, __RQF_STATS))
    return rq_flag(bpf_core_enum_value(enum rqf_flags, __RQF_STATS), 0);
  return 0;
}

static __always_inline __u32 rq_flag_use_sched(void) {
  if (bpf_core_enum_value_exists(enum rqf_flags, __RQF_USE_SCHED))
    return rq_flag(bpf_core_enum_value(enum rqf_flags, __RQF_USE_SCHED), 0);
  return 0;
}

/* The request's diskstats group at `event` (block_io_ops.h); -1: not counted. */
static __always_inline int op_of(struct request* rq, int event) {
  const __u32 flags = rq->rq_flags;
  return iowatch_op_group(rq->cmd_flags, (flags & rq_flag_flush_seq()) != 0,
                          (flags & rq_flag_io_stat()) != 0, event);
}

/* Whether the kernel stamps this queue's requests at issue. */
static __always_inline int queue_keeps_issue_time(struct request* rq) {
  const __u32 bit = queue_stats_bit;
  if (bit >= 64 || rq_flag_stats() == 0) return 0;
  return (rq->q->queue_flags >> bit) & 1;
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
static __always_inline void* value_of(void* map, const void* key, const void* zero,
                                      __u32 loss) {
  void* value = bpf_map_lookup_elem(map, key);
  if (value) return value;
  if (bpf_map_update_elem(map, key, zero, BPF_NOEXIST) != 0 && bpf_map_lookup_elem(map, key) == 0) {
    count_loss(loss);
    return 0;
  }
  return bpf_map_lookup_elem(map, key);
}

static const struct iowatch_disk_op_stats zero_stats;
static const struct iowatch_disk_state zero_disk_state;
static const struct iowatch_cgroup_io zero_cgroup_io;
static const __u64 zero_count;

static __always_inline struct iowatch_disk_op_stats* stats_of(__u32 dev, int op) {
  struct iowatch_dev_op_key key = {dev, (__u32)op};
  return value_of(&disk_ops, &key, &zero_stats, IOWATCH_LOST_SERIES);
}

static __always_inline void add_latency(struct iowatch_latency_hist* h, __u64 ns) {
  h->count += 1;
  h->sum_ns += ns;
  const __u32 slot = latency_slot(ns);
  if (slot < IOWATCH_LAT_SLOTS) h->slots[slot] += 1;
  const __u32 coarse = coarse_slot(ns);
  if (coarse < IOWATCH_COARSE_SLOTS) h->coarse[coarse] += 1;
}

/* The request's address as a number, for hashing: the verifier refuses
 * arithmetic on the pointer itself. Read from this program's own stack
 * (never from storage another program shares: a completion interrupting
 * an issue between a store and its load would swap the two requests). */
static __always_inline __u64 address_of(struct request* rq) {
  __u64 id = 0;
  bpf_probe_read_kernel(&id, sizeof id, &rq);
  return id;
}

/* The first of a request's probe slots (Fibonacci hashing of its address). */
static __always_inline __u32 in_flight_slot(__u64 rq) {
  return (__u32)(((rq >> 6) * 0x9E3779B97F4A7C15ULL) >> 48);
}

/* Where the request's issue is kept: its own slot (*own: a requeued request
 * issued again, or an older life of the same address whose completion was
 * missed) or a free one, claimed; null when every probe is taken. */
static __always_inline struct in_flight* claim_slot(__u64 rq, int* own) {
  const __u32 first = in_flight_slot(rq);
  *own = 1;
#pragma unroll
  for (__u32 i = 0; i < IN_FLIGHT_PROBES; ++i) {
    const __u32 slot = (first + i) & (MAX_IN_FLIGHT - 1);
    struct in_flight* f = bpf_map_lookup_elem(&in_flight, &slot);
    if (f && f->rq == rq) return f;
  }
  *own = 0;
#pragma unroll
  for (__u32 i = 0; i < IN_FLIGHT_PROBES; ++i) {
    const __u32 slot = (first + i) & (MAX_IN_FLIGHT - 1);
    struct in_flight* f = bpf_map_lookup_elem(&in_flight, &slot);
    if (f && __sync_val_compare_and_swap(&f->rq, 0, rq) == 0) return f;
  }
  return 0;
}

/* The request's issue time and size (*bytes), its slot freed; 0 when none
 * was kept for this life of the request. */
static __always_inline __u64 release_slot(__u64 rq, __u64 start_ns, __u64 now, __u64* bytes) {
  const __u32 first = in_flight_slot(rq);
#pragma unroll
  for (__u32 i = 0; i < IN_FLIGHT_PROBES; ++i) {
    const __u32 slot = (first + i) & (MAX_IN_FLIGHT - 1);
    struct in_flight* f = bpf_map_lookup_elem(&in_flight, &slot);
    if (f && f->rq == rq) {
      const int this_life = f->start_ns == start_ns;
      const __u64 issue = this_life ? f->issue_ns : 0;
      if (this_life) *bytes = f->bytes;
      /* A size kept on a queue that stamps the issue (sized_in_flight). */
      if (f->issue_ns == 0) __sync_fetch_and_sub(&sized_in_flight, 1);
      /* Read before freed: the next claim may come from any CPU. */
      __sync_lock_test_and_set(&f->rq, 0);
      return iowatch_issue_is_of(issue, start_ns, now) ? issue : 0;
    }
  }
  return 0;
}

/* The size a request of a queue that stamps the issue was issued with:
 * the kernel's record (rq->stats_sectors), or the slot of one too large
 * for it. On a kernel without the record (before 5.5, where the
 * completion is the last bytes' block_rq_complete), the bytes left. */
static __always_inline __u64 stamped_bytes(struct request* rq, __u64 start_ns, __u64 now) {
  __u64 bytes = bpf_core_field_exists(rq->stats_sectors) ? (__u64)rq->stats_sectors << 9
                                                          : (__u64)rq->__data_len;
  if (sized_in_flight == 0) return bytes;
  const __u64 id = address_of(rq);
  if (id) release_slot(id, start_ns, now, &bytes);
  return bytes;
}

/* Keeps the size of a request too large for the kernel's record of it. A
 * request finding every slot taken is classed by its record's low bits. */
static __always_inline void keep_size(struct request* rq) {
  const __u64 id = address_of(rq);
  int own = 0;
  struct in_flight* slot = id ? claim_slot(id, &own) : 0;
  if (!slot) return;
  if (!own || slot->issue_ns != 0) __sync_fetch_and_add(&sized_in_flight, 1);
  slot->start_ns = rq->start_time_ns;
  slot->issue_ns = 0;
  slot->bytes = rq->__data_len;
}

/* The cgroup of the blkcg the block layer charged the request's first bio to. */
static __always_inline __u64 cgroup_of(struct request* rq) {
  if (!bpf_core_field_exists(rq->bio->bi_blkg)) return 0; /* no CONFIG_BLK_CGROUP */
  struct bio* bio = rq->bio;
  if (!bio) return 0;
  return bio->bi_blkg->blkcg->css.cgroup->kn->id;
}

static __always_inline void count_cgroup(__u64 cgroup_id, __u32 dev, int op, __u64 bytes) {
  if (cgroup_id == 0) return;
  struct iowatch_cgroup_key key = {cgroup_id, dev, (__u32)op};
  struct iowatch_cgroup_io* io = value_of(&cgroup_io, &key, &zero_cgroup_io, IOWATCH_LOST_CGROUP);
  if (!io) return;
  io->bytes += bytes;
  io->requests += 1;
}

/* A request's size, pattern (whether it starts where the disk's previous
 * one of its op ended) and alignment, in its disk and op's value. */
static __always_inline void count_request(struct iowatch_disk_op_stats* v, __u32 dev, int op,
                                          __u64 sector, __u64 bytes) {
  struct iowatch_request_stats* s = &v->requests;
  s->bytes += bytes;
  struct iowatch_disk_state* d = value_of(&disks, &dev, &zero_disk_state, IOWATCH_LOST_SERIES);
  const __u32 i = (__u32)op;
  int sequential = 0;
  __u32 unit = 0;
  if (d && i < IOWATCH_OP_COUNT) {
    sequential = d->next_sector[i] == sector + 1;
    d->next_sector[i] = sector + (bytes >> 9) + 1;
    unit = d->align_bytes;
  }
  if (sequential)
    s->sequential += 1;
  else
    s->random += 1;
  const __u32 slot = size_slot(bytes);
  if (slot < IOWATCH_SIZE_SLOTS) s->size_slots[slot] += 1;
  if (unit) {
    if ((sector << 9) % unit == 0 && bytes % unit == 0)
      s->aligned += 1;
    else
      s->unaligned += 1;
  }
}

/* The request's cgroup's bytes: the issue is where its first bio still is. */
static __always_inline void count_issue_cgroup(struct request* rq, __u32 dev, int op) {
  if (count_cgroups && op != IOWATCH_OP_FLUSH)
    count_cgroup(cgroup_of(rq), dev, op, rq->__data_len);
}

/* A request counted at its issue (kernels before block_io_done, queues that
 * keep no issue time): its size, pattern, alignment and cgroup. */
static __always_inline void count_issue(struct request* rq, int op) {
  const __u32 dev = disk_of(rq);
  struct iowatch_disk_op_stats* v = stats_of(dev, op);
  if (!v) return;
  count_request(v, dev, op, rq->__sector, rq->__data_len);
  count_issue_cgroup(rq, dev, op);
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(on_issue, struct request* rq) {
  const int op = op_of(rq, IOWATCH_EVENT_ISSUE);
  if (op < 0) return 0;
  if (queue_keeps_issue_time(rq)) {
    /* The kernel stamps it right after this tracepoint; a request it
     * stamped already was requeued and is issued again: counted once. */
    if (!(rq->rq_flags & rq_flag_stats())) {
      if (completion_at_done)
        count_issue_cgroup(rq, disk_of(rq), op);
      else
        count_issue(rq, op);
      if (!iowatch_stats_sectors_hold(rq->__data_len)) keep_size(rq);
    }
    return 0;
  }
  /* The flush request of a queue without statistics carries no flag that
   * makes the kernel timestamp its end (blk_mq_need_time_stamp): on 6.5+
   * its block_io_done never fires, while diskstats counts it at
   * flush_end_io. Counted here, said as a loss of its stages. */
  if (op == IOWATCH_OP_FLUSH && completion_at_done && rq_flag_use_sched() &&
      !(rq->rq_flags & (rq_flag_io_stat() | rq_flag_use_sched()))) {
    count_loss(IOWATCH_LOST_FLUSH);
    return 0;
  }
  const __u64 issue_ns = bpf_ktime_get_ns();
  const __u64 start_ns = rq->start_time_ns;
  const __u64 id = address_of(rq);
  int own = 0;
  struct in_flight* slot = id ? claim_slot(id, &own) : 0;
  if (!slot) {
    count_loss(IOWATCH_LOST_ISSUE);
    count_issue(rq, op);
    return 0;
  }
  /* Requeued and issued again in the same life: counted when first issued. */
  const int again = own && slot->start_ns == start_ns;
  /* An older life's kept size (its completion missed): no longer in flight. */
  if (own && slot->issue_ns == 0) __sync_fetch_and_sub(&sized_in_flight, 1);
  slot->start_ns = start_ns;
  slot->issue_ns = issue_ns;
  slot->bytes = rq->__data_len;
  if (!again) count_issue(rq, op);
  return 0;
}

/* The device stage of the request's size class. */
static __always_inline void add_class(struct iowatch_disk_op_stats* v, __u64 bytes, __u64 ns) {
  const __u32 c = (__u32)iowatch_size_class(bytes);
  if (c >= IOWATCH_CLASS_COUNT) return;
  struct iowatch_class_stats* s = &v->device_class[c];
  s->count += 1;
  s->sum_ns += ns;
  s->bytes += bytes;
}

/* The request's end as diskstats counts it, at `now`. */
static __always_inline void account(struct request* rq, int op, __u64 now) {
  const __u32 flags = rq->rq_flags;
  const __u32 dev = disk_of(rq);
  struct iowatch_disk_op_stats* v = stats_of(dev, op);
  if (!v) return;
  const __u64 start = rq->start_time_ns;
  __u64 issue = 0;
  __u64 bytes = 0; /* at issue: __data_len counts down to 0 as the bytes complete */
  if (flags & rq_flag_stats()) {
    issue = iowatch_kernel_issue(rq->io_start_time_ns, start, now);
    bytes = stamped_bytes(rq, start, now);
    /* At block_io_done every bio has ended: rq->__sector is still where the
     * request started (it moves only with a partial completion). */
    if (completion_at_done) count_request(v, dev, op, rq->__sector, bytes);
  } else if (queue_keeps_issue_time(rq)) {
    /* Never handed to the driver: an fsync's data-less write, which the
     * flush machinery ends when its flush is done. diskstats counts it as a
     * request of 0 bytes. */
    v->requests.size_slots[0] += 1;
  } else {
    const __u64 id = address_of(rq);
    if (id) issue = release_slot(id, start, now, &bytes);
  }
  if (start != 0 && start <= now) add_latency(&v->stage[IOWATCH_STAGE_TOTAL], now - start);
  if (!iowatch_issue_is_of(issue, start, now)) return;
  add_latency(&v->stage[IOWATCH_STAGE_DEVICE], now - issue);
  if (count_queue_stage) add_latency(&v->stage[IOWATCH_STAGE_QUEUE], issue - start);
  add_class(v, bytes, now - issue);
}

SEC("tp_btf/block_io_done")
int BPF_PROG(on_done, struct request* rq) {
  /* The clock first: diskstats read it just before this tracepoint, and
   * every nanosecond spent here would add to the total stage. */
  const __u64 now = bpf_ktime_get_ns();
  const int op = op_of(rq, IOWATCH_EVENT_COMPLETE);
  if (op >= 0) account(rq, op, now);
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(on_complete, struct request* rq, int error, unsigned int nr_bytes) {
  const __u64 now = bpf_ktime_get_ns();
  const int op = op_of(rq, IOWATCH_EVENT_COMPLETE);
  if (op < 0) return 0;
  /* A partial completion leaves the request in flight; diskstats counts
   * it when its last bytes complete. */
  if (nr_bytes < rq->__data_len) return 0;
  account(rq, op, now);
  return 0;
}

/* blk_status_t is a u8: the rest of the argument's register is not its. */
SEC("tp_btf/block_rq_error")
int BPF_PROG(on_error, struct request* rq, int error) {
  const struct iowatch_error_key key = {disk_of(rq), rq->cmd_flags & IOWATCH_REQ_OP_MASK,
                                        (__u32)error & 0xffU};
  __u64* n = value_of(&block_errors, &key, &zero_count, IOWATCH_LOST_SERIES);
  if (n) *n += 1;
  return 0;
}
