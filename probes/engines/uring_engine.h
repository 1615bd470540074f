// The io_uring engine (liburing), shaped like fio 3.33's io_uring engine
// and with its defaults: plain IORING_OP_READ/WRITE on the caller's
// descriptor and buffers (fio's default nonvectored probe picks these on
// any kernel since 5.6); fio's options, all off by default, change that:
// fixedbufs registers the buffers once (READ_FIXED/WRITE_FIXED, no page
// pinning per I/O), registerfiles the descriptor (IOSQE_FIXED_FILE, no file
// lookup per I/O), sqthread_poll sets IORING_SETUP_SQPOLL and, as in fio,
// registerfiles; hipri sets IORING_SETUP_IOPOLL (polled completions; the
// kernel fails each I/O with EOPNOTSUPP when the device has no poll queues,
// and iowatch reports that error as fio does).
// Queue only fills submission entries (user_data = the request's tag);
// Submit hands the whole batch to the kernel with one io_uring_enter; Reap
// waits for `min` completions or the timeout, then takes everything ready.
// Fallbacks (Fallbacks(), each with its reason), where fio would fail the
// job or never tries: buffer registration refused (ENOMEM from
// RLIMIT_MEMLOCK without CAP_IPC_LOCK) → unregistered buffers; file
// registration refused → the plain descriptor; IORING_SETUP_SUBMIT_ALL
// unknown (Linux < 5.18) → a ring without it. A kernel that refuses
// io_uring itself (EPERM, ENOSYS, kernel.io_uring_disabled) is an error with
// code kUnsupported that names the reason and suggests --ioengine=psync.
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
  // `refused_setup_flags`: IORING_SETUP_* flags to treat as unknown to the
  // kernel (EINVAL), and `hidden_features` IORING_FEAT_* bits to treat as
  // absent, as an older kernel would; seams for tests.
  explicit UringEngine(IoUringOptions options = {}, uint32_t refused_setup_flags = 0,
                       uint32_t hidden_features = 0);
  UringEngine(const UringEngine&) = delete;
  UringEngine& operator=(const UringEngine&) = delete;
  ~UringEngine() override;

  bool IsSynchronous() const override { return false; }
  std::string_view Name() const override { return ToString(EngineKind::kIoUring); }
  std::span<const EngineFallback> Fallbacks() const override { return fallbacks_; }

  // Whether the open ring uses registered buffers (READ_FIXED/WRITE_FIXED)
  // and a registered file (IOSQE_FIXED_FILE).
  bool UsesFixedBuffers() const { return fixed_buffers_; }
  uint32_t AbandonedIos() const override { return abandoned_; }
  std::unique_ptr<AbandonedIo> TakeAbandoned() override { return std::move(abandoned_ring_); }
  bool UsesFixedFile() const { return fixed_file_; }

 private:
  uint32_t MaxDepth() const override;
  Status DoOpen(const EngineTarget& target, uint32_t depth) override;
  Status DoQueue(const IoRequest& request) override;
  Result<uint32_t> DoSubmit() override;
  Result<size_t> DoReap(size_t min, std::span<IoCompletion> out,
                        std::chrono::nanoseconds timeout) override;
  void DoClose() noexcept override;
  Status SetUpRing(uint32_t entries);
  void RegisterFile();
  void RegisterBuffers();
  void DrainInFlight() noexcept;

  const IoUringOptions options_;
  const uint32_t refused_setup_flags_;
  const uint32_t hidden_features_;
  std::unique_ptr<io_uring> ring_;  // null when closed
  int fd_ = -1;
  uint32_t queued_ = 0;     // SQEs filled since the last Submit
  uint32_t in_flight_ = 0;  // submitted, completion not yet reaped
  bool fixed_buffers_ = false;
  uint32_t abandoned_ = 0;                       // in flight when the last Close gave up
  std::unique_ptr<AbandonedIo> abandoned_ring_;  // until taken
  bool fixed_file_ = false;
  std::vector<EngineFallback> fallbacks_;
  std::vector<io_uring_cqe*> cqes_;
};

}  // namespace iowatch::probes
