// fio's "libaio" engine: Linux native AIO (io_setup, io_submit,
// io_getevents through libaio), the engine most published fio jobs use.
// As in fio 3.33: one context of `depth` slots, an iocb per request on the
// caller's descriptor and buffers (IOCB_CMD_PREAD/PWRITE, and FSYNC), Queue
// fills iocbs, Submit hands them all to one io_submit (what the kernel does
// not take, EAGAIN, stays queued for the next Submit; an iocb it refuses,
// EBADF or EINVAL, completes with that error, where fio fails the job),
// Reap is io_getevents with the runner's minimum and timeout. Only O_DIRECT I/O is asynchronous:
// a buffered read or write completes inside io_submit, as fio's
// documentation warns, so such runs measure submission, not the device.
// A kernel without AIO (ENOSYS) or with every context in use (EAGAIN:
// /proc/sys/fs/aio-nr at fs.aio-max-nr) is an error with code kUnsupported
// that says which and suggests --ioengine=psync.
// Close cancels what is in flight and waits (bounded) for it; what does not
// complete is abandoned with its context (io_destroy would wait for it
// without bound), AbandonedIos says how many and TakeAbandoned hands the
// context over.
// Thread-safety: one owner; the descriptor and buffers belong to the caller
// and must outlive Close.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "probes/engines/engine.h"

// libaio stays out of this header.
struct io_context;
struct iocb;

namespace iowatch::probes {

class AioEngine final : public ProbeEngine {
 public:
  AioEngine();
  AioEngine(const AioEngine&) = delete;
  AioEngine& operator=(const AioEngine&) = delete;
  ~AioEngine() override;

  uint32_t AbandonedIos() const override { return abandoned_; }
  std::unique_ptr<AbandonedIo> TakeAbandoned() override { return std::move(abandoned_context_); }
  bool IsSynchronous() const override { return false; }
  std::string_view Name() const override { return ToString(EngineKind::kLibaio); }

 private:
  Status DoOpen(const EngineTarget& target, uint32_t depth) override;
  Status DoQueue(const IoRequest& request) override;
  Result<uint32_t> DoSubmit() override;
  Result<size_t> DoReap(size_t min, std::span<IoCompletion> out,
                        std::chrono::nanoseconds timeout) override;
  void DoClose() noexcept override;
  void DrainInFlight() noexcept;
  // Takes up to max_events completions within `timeout`, at least `min`
  // unless it passes; their slots freed. Negative: -errno.
  int GetEvents(size_t min, size_t max_events, std::chrono::nanoseconds timeout,
                std::span<IoCompletion> out);

  io_context* context_ = nullptr;  // null when closed
  int fd_ = -1;
  std::vector<iocb> iocbs_;            // one per slot
  std::vector<uint64_t> tags_;         // the request's tag, per slot
  std::vector<uint32_t> free_;         // free slots
  std::vector<iocb*> queued_;          // filled, not yet submitted, in order
  std::vector<IoCompletion> refused_;  // refused by io_submit, not yet reaped
  uint32_t in_flight_ = 0;             // submitted, completion not yet reaped
  uint32_t abandoned_ = 0;
  std::unique_ptr<AbandonedIo> abandoned_context_;  // until taken
};

}  // namespace iowatch::probes
