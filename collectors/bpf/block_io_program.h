// BlockIoProgram: the block-layer BPF program (block_io.bpf.c) loaded into
// the kernel and attached to its two tracepoints (and block_rq_error, where
// the kernel has it) for as long as the object lives; Read() sums its
// per-CPU maps into a BlockIoSample.
//
// Load() needs the kernel's BTF (/sys/kernel/btf/vmlinux: libbpf relocates
// the program's field accesses against it) and CAP_BPF with CAP_PERFMON (or
// CAP_SYS_ADMIN); its error names which one is missing, or carries the
// verifier's last words. libbpf's own messages go to spdlog at debug level.
// Thread-safety: Read and SetAlignment may be called from any one thread at
// a time; the kernel updates the maps concurrently, so a Read sees each
// counter at some moment during it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "collectors/bpf/block_io_counters.h"
#include "collectors/bpf/block_io_sample.h"
#include "common/result.h"

struct block_io;  // the generated skeleton (block_io.skel.h)

namespace iowatch::collectors::bpf {

class BlockIoProgram final : public BlockIoCounters {
 public:
  struct LoadOptions {
    // The kernel BTF file whose presence is checked first (a test points it
    // elsewhere to see the message).
    std::filesystem::path btf = "/sys/kernel/btf/vmlinux";
    // Whether each request's cgroup is looked up and its bytes counted (a
    // look-up at every issue; off when nothing reads them).
    bool count_cgroups = true;
    // Whether the queue stage's histogram is kept (a third histogram per
    // request).
    bool count_queue_stage = true;
  };
  static Result<BlockIoProgram> Load(const LoadOptions& options);

  BlockIoProgram(BlockIoProgram&&) noexcept;
  BlockIoProgram& operator=(BlockIoProgram&&) noexcept;
  ~BlockIoProgram() override;

  Result<BlockIoSample> Read() const override;
  Status SetAlignment(uint32_t major, uint32_t minor, uint32_t bytes) override;
  Status ForgetCgroups(std::span<const uint64_t> cgroup_ids) override;
  Status ForgetDisks(std::span<const uint32_t> kernel_devs) override;
  void SetCounting(bool cgroups, bool queue_stage) override;

 private:
  struct SkeletonDeleter {
    void operator()(block_io* skeleton) const;
  };
  BlockIoProgram(std::unique_ptr<block_io, SkeletonDeleter> skeleton,
                 std::map<uint32_t, std::string> op_names, bool counts_errors);

  std::unique_ptr<block_io, SkeletonDeleter> skeleton_;
  std::map<uint32_t, std::string> op_names_;  // REQ_OP value -> "read", "write_zeroes", …
  bool counts_errors_ = false;                // on_error attached (block_rq_error)
};

}  // namespace iowatch::collectors::bpf
