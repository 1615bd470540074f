// fio's "psync" engine: pread(2), pwrite(2) and fsync(2) on the caller's
// thread. Submit performs every queued request in order and their
// completions are ready for Reap as soon as Submit returns. Like fio, which
// completes each I/O of a sync engine inside its queue hook, the engine
// accepts any depth but never has more than one I/O in the kernel: iodepth
// above 1 only batches requests, it adds no parallelism.
// A completion holds the bytes transferred, which may be short (the runner
// counts short I/Os, as fio does, and is not told twice), or -errno; EINTR
// is retried.
// Thread-safety: one owner; the descriptor and buffers belong to the caller.
#pragma once

#include <vector>

#include "probes/engines/engine.h"

namespace iowatch::probes {

class PsyncEngine final : public ProbeEngine {
 public:
  bool IsSynchronous() const override { return true; }
  std::string_view Name() const override { return ToString(EngineKind::kPsync); }

 private:
  Status DoOpen(const EngineTarget& target, uint32_t depth) override;
  Status DoQueue(const IoRequest& request) override;
  Result<uint32_t> DoSubmit() override;
  Result<size_t> DoReap(size_t min, std::span<IoCompletion> out,
                        std::chrono::nanoseconds timeout) override;
  void DoClose() noexcept override;
  int64_t Perform(const IoRequest& request) const;

  int fd_ = -1;
  std::vector<IoRequest> queued_;
  std::vector<IoCompletion> completed_;
  size_t completed_begin_ = 0;  // completions before this index were reaped
};

}  // namespace iowatch::probes
