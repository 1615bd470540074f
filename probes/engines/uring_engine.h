// The io_uring engine (liburing), shaped like fio's io_uring engine with
// fixedbufs and registerfiles on: the caller's buffers and descriptor are
// registered once at Open, so each I/O skips the per-request page pinning
// and file lookup. Queue only fills submission entries (user_data = the
// request's tag); Submit hands the whole batch to the kernel with one
// io_uring_enter; Reap waits for `min` completions or the timeout, then
// takes everything ready in one batch.
// Fallbacks, each visible through an accessor so a run can report them:
// buffer registration refused with ENOMEM (RLIMIT_MEMLOCK for a process
// without CAP_IPC_LOCK) → plain READ/WRITE; file registration refused → the
// plain descriptor. A kernel that refuses io_uring itself (EPERM, ENOSYS,
// kernel.io_uring_disabled) is an error with code kUnsupported that names
// the reason and suggests --ioengine=psync.
// Close cancels what is still in flight and waits (bounded) for it, because
// the kernel would otherwise go on writing into the caller's buffers.
// Thread-safety: one owner; the descriptor and buffers belong to the caller
// and must outlive Close.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "probes/engines/engine.h"

// liburing stays out of this header so users of the engine need not see it.
struct io_uring;
struct io_uring_cqe;

namespace iowatch::probes {

class UringEngine final : public ProbeEngine {
 public:
  UringEngine();
  UringEngine(const UringEngine&) = delete;
  UringEngine& operator=(const UringEngine&) = delete;
  ~UringEngine() override;

  Result<void> Open(const EngineTarget& target, uint32_t depth) override;
  Result<void> Queue(const IoRequest& request) override;
  Result<uint32_t> Submit() override;
  Result<size_t> Reap(size_t min, std::span<IoCompletion> out,
                      std::chrono::nanoseconds timeout) override;
  void Close() noexcept override;
  bool IsSynchronous() const override { return false; }
  std::string_view Name() const override { return "io_uring"; }

  // False when the buffers could not be registered (or there are none) and
  // plain READ/WRITE are used; FixedBuffersFallbackReason() says why.
  bool UsesFixedBuffers() const { return fixed_buffers_; }
  const std::string& FixedBuffersFallbackReason() const { return fixed_buffers_reason_; }
  // False when the descriptor could not be registered (e.g. EMFILE).
  bool UsesFixedFile() const { return fixed_file_; }

 private:
  Result<void> RegisterBuffers();
  void DrainInFlight() noexcept;

  std::unique_ptr<io_uring> ring_;  // null when closed
  int fd_ = -1;
  uint32_t depth_ = 0;
  uint32_t queued_ = 0;     // SQEs filled since the last Submit
  uint32_t in_flight_ = 0;  // submitted, completion not yet reaped
  bool fixed_buffers_ = false;
  bool fixed_file_ = false;
  std::string fixed_buffers_reason_;
  std::vector<std::span<std::byte>> buffers_;
  std::vector<io_uring_cqe*> cqes_;
};

}  // namespace iowatch::probes
