/* The few kernel types block_io.bpf.c reads, declared by hand with
 * preserve_access_index: libbpf relocates every field access against the
 * running kernel's BTF (/sys/kernel/btf/vmlinux) when it loads the program,
 * so the offsets here do not matter and no vmlinux.h of the build machine's
 * kernel is needed (the build runs anywhere clang-19 and libbpf-dev are).
 * Only the fields used are declared. */
#ifndef IOWATCH_COLLECTORS_BPF_KERNEL_TYPES_BPF_H_
#define IOWATCH_COLLECTORS_BPF_KERNEL_TYPES_BPF_H_

/* The kernel's fixed-width types and the map and program constants
 * bpf_helpers.h needs, from the system's UAPI headers. */
#include <linux/bpf.h>
#include <linux/types.h>

typedef __u64 sector_t;

struct kernfs_node {
  __u64 id;
} __attribute__((preserve_access_index));

struct cgroup {
  struct kernfs_node* kn;
} __attribute__((preserve_access_index));

struct cgroup_subsys_state {
  struct cgroup* cgroup;
} __attribute__((preserve_access_index));

struct blkcg {
  struct cgroup_subsys_state css;
} __attribute__((preserve_access_index));

struct blkcg_gq {
  struct blkcg* blkcg;
} __attribute__((preserve_access_index));

struct bio {
  struct blkcg_gq* bi_blkg;
} __attribute__((preserve_access_index));

struct gendisk {
  int major;
  int first_minor;
} __attribute__((preserve_access_index));

struct request_queue {
  struct gendisk* disk;
  unsigned long queue_flags;
} __attribute__((preserve_access_index));

struct request {
  struct request_queue* q;
  __u32 cmd_flags;
  __u32 rq_flags;
  unsigned int __data_len;
  sector_t __sector;
  struct bio* bio;
  __u64 start_time_ns;
  __u64 io_start_time_ns;
  unsigned short stats_sectors;
} __attribute__((preserve_access_index));

/* Since 6.x the request flags are bits of this enum (RQF_x = 1 << __RQF_x);
 * before, they were macros, absent from BTF (block_io.bpf.c falls back to
 * their old values). */
enum rqf_flags {
  __RQF_FLUSH_SEQ = 1,
  __RQF_USE_SCHED = 5,
  __RQF_IO_STAT = 8,
  __RQF_STATS = 11,
};

#endif /* IOWATCH_COLLECTORS_BPF_KERNEL_TYPES_BPF_H_ */
