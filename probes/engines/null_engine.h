// fio's "null" engine: every request completes at once with its full length
// and no I/O happens, so the runner itself (offsets, pacing, runtime,
// statistics) can be tested and its overhead measured.
// Thread-safety: one owner.
#pragma once

#include <vector>

#include "probes/engines/engine.h"

namespace iowatch::probes {

class NullEngine final : public ProbeEngine {
 public:
  bool IsSynchronous() const override { return true; }
  std::string_view Name() const override { return ToString(EngineKind::kNull); }

  // Every request seen since Open, in order (for tests of the runner).
  const std::vector<IoRequest>& History() const { return history_; }
  void KeepHistory(bool keep) { keep_history_ = keep; }

 private:
  bool MovesData() const override { return false; }
  Status DoOpen(const EngineTarget& target, uint32_t depth) override;
  Status DoQueue(const IoRequest& request) override;
  Result<uint32_t> DoSubmit() override;
  Result<size_t> DoReap(size_t min, std::span<IoCompletion> out,
                        std::chrono::nanoseconds timeout) override;
  void DoClose() noexcept override;
  std::vector<IoRequest> queued_;
  std::vector<IoCompletion> completed_;
  std::vector<IoRequest> history_;
  bool keep_history_ = false;
};

}  // namespace iowatch::probes
