// BlockIoCounters: what a reader needs of the loaded block-layer program
// (BlockIoProgram), as an interface so that the daemon's sampling source is
// tested on scripted samples where no kernel will load it.
// Thread-safety: as the implementation says; BlockIoProgram's calls may come
// from any one thread at a time.
#pragma once

#include <cstdint>
#include <span>

#include "collectors/bpf/block_io_sample.h"
#include "common/result.h"

namespace iowatch::collectors::bpf {

class BlockIoCounters {
 public:
  virtual ~BlockIoCounters() = default;

  // Everything counted since the program was loaded, summed over CPUs.
  virtual Result<BlockIoSample> Read() const = 0;

  // Requests on the disk count as aligned when their start and length are
  // multiples of `bytes` (0: stop counting alignment on it).
  virtual Status SetAlignment(uint32_t major, uint32_t minor, uint32_t bytes) = 0;

  // Deletes the counters of cgroups that are gone (the reader has folded
  // them into its own totals), so that their entries do not fill the map on
  // a host that creates a cgroup per job.
  virtual Status ForgetCgroups(std::span<const uint64_t> cgroup_ids) = 0;

  // Deletes the counters of disks (KernelDev numbers) the reader no longer
  // wants or that are gone, so that a host that churns device numbers
  // (loop, dm, nbd) never fills the map: a disk that returns under the same
  // number counts from 0, as its diskstats line does.
  virtual Status ForgetDisks(std::span<const uint32_t> kernel_devs) = 0;

  // What the program counts beyond the device and total stages, switched
  // without a reload (the counts go on): each request's cgroup bytes, and
  // the queue stage. A reader that wants neither saves the kernel a cgroup
  // look-up and a histogram per request.
  virtual void SetCounting(bool cgroups, bool queue_stage) {
    (void)cgroups;
    (void)queue_stage;
  }
};

}  // namespace iowatch::collectors::bpf
